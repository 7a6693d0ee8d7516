/**
 * A Collab relay on loopback, speaking what omp 18.2.3's relay client speaks (src/collab/relay-client.ts,
 * protocol.ts and pi-wire): `ws://127.0.0.1:<port>/r/<room>?role=host|guest`; binary envelopes
 * `[4-byte big-endian peer id][sealed frame]` (a guest's id rewritten by the relay, a host's 0 for all or N for
 * guest N); text JSON `peer-joined`/`peer-left` to the host and `room-closed` to guests; close codes 4001 (room
 * closed), 4004 (no such room), 4009 (second host), 4029 (room full). The relay sees sealed bytes only.
 *
 * `Guest` is a hand-made Collab guest: it seals and opens frames with the room key (AES-256-GCM, 12-byte IV),
 * so a test can act as a view-link holder sending what omp's own guest never would.
 */
import type { Server, ServerWebSocket } from "bun";

const ROOM_MAX = 8;
const GUESTS_MAX = 16;
const CLOSED = { 4001: "room closed", 4004: "no such room", 4009: "host already connected", 4029: "room is full" };

interface Peer {
	room: string;
	role: "host" | "guest";
	id: number;
}

interface Room {
	host: ServerWebSocket<Peer>;
	guests: Map<number, ServerWebSocket<Peer>>;
	nextId: number;
}

export class Relay {
	readonly #rooms = new Map<string, Room>();
	readonly #server: Server<Peer>;
	#fromGuests = 0;

	private constructor(server: Server<Peer>) {
		this.#server = server;
	}

	static start(): Relay {
		const on: { relay?: Relay } = {};
		const server = Bun.serve<Peer>({
			hostname: "127.0.0.1",
			port: 0,
			fetch(req, srv) {
				const url = new URL(req.url);
				const room = /^\/r\/([A-Za-z0-9_-]{10,64})$/.exec(url.pathname)?.[1];
				const role = url.searchParams.get("role");
				if (room === undefined || (role !== "host" && role !== "guest")) return new Response("no", { status: 404 });
				return srv.upgrade(req, { data: { room, role, id: 0 } }) ? undefined : new Response("no", { status: 400 });
			},
			websocket: {
				open: ws => on.relay?.open(ws),
				message: (ws, data) => on.relay?.message(ws, data),
				close: ws => on.relay?.close(ws),
			},
		});
		on.relay = new Relay(server);
		return on.relay;
	}

	/** `ws://127.0.0.1:<port>`, the value for omp's `collab.relayUrl`. */
	get url(): string {
		return `ws://127.0.0.1:${this.#server.port}`;
	}

	/** Guests connected to `room` now. */
	guests(room: string): number {
		return this.#rooms.get(room)?.guests.size ?? 0;
	}

	/** Binary frames guests sent to their hosts so far (what reached a host, not what it did with them). */
	fromGuests(): number {
		return this.#fromGuests;
	}

	/** The rooms with a host now. */
	rooms(): string[] {
		return [...this.#rooms.keys()];
	}

	/** The relay drops every connection, as a restart would (the host reconnects and makes a new room). */
	dropAll(): void {
		for (const room of this.#rooms.values()) room.host.close(1012, "relay restart");
	}

	stop(): void {
		this.#server.stop(true);
	}

	private open(ws: ServerWebSocket<Peer>): void {
		const { room: name, role } = ws.data;
		const room = this.#rooms.get(name);
		if (role === "host") {
			if (room) {
				ws.close(4009, CLOSED[4009]);
				return;
			}
			if (this.#rooms.size >= ROOM_MAX) {
				ws.close(4029, CLOSED[4029]);
				return;
			}
			this.#rooms.set(name, { host: ws, guests: new Map(), nextId: 1 });
			return;
		}
		if (!room) {
			ws.close(4004, CLOSED[4004]);
			return;
		}
		if (room.guests.size >= GUESTS_MAX) {
			ws.close(4029, CLOSED[4029]);
			return;
		}
		ws.data.id = room.nextId++;
		room.guests.set(ws.data.id, ws);
		room.host.send(JSON.stringify({ t: "peer-joined", peer: ws.data.id }));
	}

	private message(ws: ServerWebSocket<Peer>, data: string | Buffer): void {
		const room = this.#rooms.get(ws.data.room);
		// Text from a peer is not part of the protocol; an envelope shorter than its header is dropped.
		if (!room || typeof data === "string" || data.byteLength < 4) return;
		const bytes = new Uint8Array(data);
		const view = new DataView(bytes.buffer, bytes.byteOffset, 4);
		if (ws.data.role === "guest") {
			if (room.guests.get(ws.data.id) !== ws) return;
			view.setUint32(0, ws.data.id, false);
			this.#fromGuests++;
			room.host.send(bytes);
			return;
		}
		if (room.host !== ws) return;
		const target = view.getUint32(0, false);
		if (target === 0) for (const guest of room.guests.values()) guest.send(bytes);
		else room.guests.get(target)?.send(bytes);
	}

	private close(ws: ServerWebSocket<Peer>): void {
		const room = this.#rooms.get(ws.data.room);
		if (!room) return;
		if (ws.data.role === "host") {
			if (room.host !== ws) return;
			this.#rooms.delete(ws.data.room);
			for (const guest of room.guests.values()) {
				guest.send(JSON.stringify({ t: "room-closed" }));
				guest.close(4001, CLOSED[4001]);
			}
			return;
		}
		if (room.guests.get(ws.data.id) !== ws) return;
		room.guests.delete(ws.data.id);
		room.host.send(JSON.stringify({ t: "peer-left", peer: ws.data.id }));
	}
}

/** A Collab link as omp parses it: the room's socket URL, its key and, for a control link, the write token. */
function parseLink(link: string): { wsUrl: string; key: Uint8Array; writeToken?: Uint8Array } {
	const inner = link.includes("#") ? link.slice(link.indexOf("#") + 1) : link;
	const m = /^(ws:\/\/[^/]+)\/r\/([A-Za-z0-9_-]{10,64})\.([A-Za-z0-9_-]+)$/.exec(inner);
	if (!m) throw new Error(`not a loopback collab link: ${link}`);
	const secret = new Uint8Array(Buffer.from(m[3] ?? "", "base64url"));
	const writeToken = secret.byteLength > 32 ? secret.subarray(32) : undefined;
	return { wsUrl: `${m[1]}/r/${m[2]}`, key: secret.subarray(0, 32), ...(writeToken ? { writeToken } : {}) };
}

export type Frame = { t: string } & Record<string, unknown>;

/** A hand-made guest: joins with a link, keeps every frame the host sends it, sends what the test says. */
export class Guest {
	readonly frames: Frame[] = [];
	readonly #ws: WebSocket;
	readonly #key: CryptoKey;
	#opening: Promise<void> = Promise.resolve();

	private constructor(ws: WebSocket, key: CryptoKey) {
		this.#ws = ws;
		this.#key = key;
		ws.onmessage = ev => {
			if (typeof ev.data === "string") return;
			const bytes = new Uint8Array(ev.data as ArrayBuffer);
			// In arrival order, as omp's own client opens them.
			this.#opening = this.#opening.then(() => this.#open(bytes)).then(f => void this.frames.push(f));
		};
	}

	/** Connects with `link` and says hello with the link's write token, or with `forged` (base64url) instead. */
	static async join(link: string, name: string, forged?: string): Promise<Guest> {
		const { wsUrl, key, writeToken } = parseLink(link);
		const cryptoKey = await crypto.subtle.importKey("raw", key.slice(), "AES-GCM", false, ["encrypt", "decrypt"]);
		const ws = new WebSocket(`${wsUrl}?role=guest`);
		ws.binaryType = "arraybuffer";
		const guest = new Guest(ws, cryptoKey);
		await new Promise<void>((ok, fail) => {
			ws.onopen = () => ok();
			ws.onerror = () => fail(new Error(`guest could not reach ${wsUrl}`));
		});
		const token = forged ?? (writeToken ? Buffer.from(writeToken).toString("base64url") : undefined);
		await guest.send({ t: "hello", proto: 3, name, ...(token ? { writeToken: token } : {}) });
		return guest;
	}

	async send(frame: Frame): Promise<void> {
		const iv = crypto.getRandomValues(new Uint8Array(12));
		const plain = new TextEncoder().encode(JSON.stringify(frame));
		const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, this.#key, plain));
		const out = new Uint8Array(4 + 12 + sealed.byteLength);
		out.set(iv, 4);
		out.set(sealed, 16);
		this.#ws.send(out);
	}

	close(): void {
		this.#ws.close();
	}

	async #open(bytes: Uint8Array): Promise<Frame> {
		const iv = bytes.slice(4, 16);
		const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv }, this.#key, bytes.slice(16));
		return JSON.parse(new TextDecoder().decode(plain)) as Frame;
	}
}
