/**
 * `npm run test:clients`: installs the pinned clients into the cache (network), then runs the matrix
 * in a network namespace that has only loopback when the machine allows one (`unshare`), so no client
 * can reach anything off the machine; otherwise it runs in place and says so.
 */
import { join } from "node:path";
import { installAll } from "./clients.ts";

await installAll(line => console.log(line));
const root = join(import.meta.dir, "..", "..");
const bun = process.execPath;
const inner = `ip link set lo up && exec "${bun}" test --timeout 300000 ./test/clients/matrix.check.ts`;
const asRoot = process.getuid?.() === 0;
const probe = Bun.spawnSync(["unshare", ...(asRoot ? ["-n"] : ["-rn"]), "sh", "-c", "ip link set lo up"]);
const cmd =
	probe.exitCode === 0
		? ["unshare", ...(asRoot ? ["-n"] : ["-rn"]), "sh", "-c", inner]
		: [bun, "test", "--timeout", "300000", "./test/clients/matrix.check.ts"];
console.log(
	probe.exitCode === 0
		? "clients: running in a network namespace with loopback only"
		: "clients: unshare is not available here; running without a network namespace",
);
const p = Bun.spawn(cmd, { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: process.env });
process.exit(await p.exited);
