/**
 * Swaps two names atomically (`renameat2` RENAME_EXCHANGE through bun:ffi) in a tight loop for `ms`
 * milliseconds, then prints how many swaps it made: the directory-for-a-symlink race of issue 38.2.
 * Usage: bun exchange.ts <a> <b> <ms>
 */
import { dlopen, FFIType } from "bun:ffi";

const [a, b, ms] = process.argv.slice(2);
if (a === undefined || b === undefined) throw new Error("usage: exchange.ts <a> <b> <ms>");
const { symbols } = dlopen("libc.so.6", {
	renameat2: { args: [FFIType.i32, FFIType.ptr, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
});
const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;
const from = Buffer.from(`${a}\0`);
const to = Buffer.from(`${b}\0`);
const until = Date.now() + Number(ms ?? 30_000);
let swaps = 0;
while (Date.now() < until) {
	for (let i = 0; i < 500; i++) if (symbols.renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) === 0) swaps++;
}
console.log(swaps);
