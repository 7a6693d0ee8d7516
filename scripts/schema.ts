/**
 * Writes `schema/a2a-bridge.schema.json` from the config's field table (src/config/config.ts), the one
 * place each field is described. test/unit/config/schema.test.ts fails when the file is out of date.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { configSchema } from "../src/config/config.ts";
import { SCHEMA_FILE } from "../src/config/file.ts";

writeFileSync(SCHEMA_FILE, `${JSON.stringify(configSchema(), null, "\t")}\n`);
// The repository's formatter owns the layout (short arrays on one line), so `biome check` stays clean.
Bun.spawnSync([join(import.meta.dir, "..", "node_modules", ".bin", "biome"), "format", "--write", SCHEMA_FILE]);
console.log(`schema: wrote ${SCHEMA_FILE}`);
