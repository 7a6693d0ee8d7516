/**
 * Methods both eras serve alike (contract §6, §13), each answering in the era's voice (its statuses, its
 * result members): both eras' method tables start from these, so such a method is one row here.
 */
import type { Method } from "./methods.ts";

export const BOTH_ERAS: Readonly<Record<string, Method<unknown>>> = {};

/** The capabilities both eras declare (`initialize`, `server/discover`): a method's capability goes beside its row. */
export const BOTH_ERAS_CAPABILITIES: Readonly<Record<string, unknown>> = { tools: { listChanged: false } };
