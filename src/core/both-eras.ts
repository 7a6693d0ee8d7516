/**
 * Methods both eras serve alike (contract §6, §13), each answering in the era's voice (its statuses, its
 * result members): both eras' method tables start from these, so such a method is one row here.
 */
import type { Method } from "./methods.ts";

export const BOTH_ERAS: Readonly<Record<string, Method<unknown>>> = {};
