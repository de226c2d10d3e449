// A client on the official ACP TypeScript SDK driving `zidane acp`: the
// tests `acp::the_official_client_drives_the_agent` and
// `serve::the_official_client_over_a_websocket` run it and read the report
// it prints last (one JSON line).
//
// ACP_SDK: the SDK's entry file; ZIDANE_BIN, ZIDANE_HOME, BASE_URL, WORK:
// the binary, its home, the loopback model and the working folder. With
// SERVE_URL and SERVE_TOKEN, each connection is a WebSocket to that
// `zidane serve` (the token as a subprotocol, as a browser sends it)
// instead of a fresh `zidane acp`.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const acp = await import(process.env.ACP_SDK);
const work = process.env.WORK;

/** A WebSocket as the SDK's stream of messages; `closed` resolves when it closes. */
async function webSocketStream(url, token) {
  const socket = new WebSocket(url, ["zidane.v1", `zidane.token.${token}`]);
  await new Promise((opened, failed) => {
    socket.onopen = opened;
    socket.onerror = () => failed(new Error(`cannot connect to ${url}`));
  });
  const closed = new Promise((done) => socket.addEventListener("close", done));
  const readable = new ReadableStream({
    start(controller) {
      socket.onmessage = (event) => controller.enqueue(JSON.parse(event.data));
      socket.addEventListener("close", () => {
        try {
          controller.close();
        } catch {
          // Already closed by the reader.
        }
      });
    },
  });
  const writable = new WritableStream({
    write(message) {
      socket.send(JSON.stringify(message));
    },
  });
  return { stream: { readable, writable }, close: () => socket.close(), closed };
}

/** The SDK's stream to a fresh `zidane acp`, or to the server. */
async function connect() {
  if (process.env.SERVE_URL) {
    return webSocketStream(process.env.SERVE_URL, process.env.SERVE_TOKEN);
  }
  const child = spawn(process.env.ZIDANE_BIN, ["--base-url", process.env.BASE_URL, "acp"], {
    cwd: work,
    env: { ...process.env, ZIDANE_APPROVE: "ask" },
    stdio: ["pipe", "pipe", "inherit"],
  });
  return {
    stream: acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)),
    close: () => child.stdin.end(),
    closed: new Promise((done) => child.once("exit", done)),
  };
}

/** Runs `op` on a fresh connection, then closes it. */
async function withAgent(op) {
  const { stream, close, closed } = await connect();
  const seen = { updates: [], permission: null };
  const app = acp
    .client({ name: "zidane-acp-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      seen.updates.push(params.update);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const always = params.options.find((o) => o.kind === "allow_always");
      seen.permission = always.kind;
      return { outcome: { outcome: "selected", optionId: always.optionId } };
    });
  try {
    return await app.connectWith(stream, (ctx) => op(ctx, seen));
  } finally {
    close();
    await closed;
  }
}

const text = (t) => ({ sessionId: null, prompt: [{ type: "text", text: t }] });

const report = { stops: [] };
const sessionId = await withAgent(async (ctx, seen) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  if (!init.agentCapabilities.loadSession) throw new Error("no loadSession");
  const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: work, mcpServers: [] });
  const ask = (t) => ctx.request(acp.methods.agent.session.prompt, { ...text(t), sessionId });

  // The edit tool edits what was read.
  await ask(`call read_file ${JSON.stringify({ path: "lib.rs" })}`);
  const edit = { path: "lib.rs", old_string: "let a = 1;", new_string: "let a = 2;" };
  report.stops.push((await ask(`call edit ${JSON.stringify(edit)}`)).stopReason);
  report.permission = seen.permission;
  const done = seen.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
  report.diff = done.flatMap((u) => u.content ?? []).find((c) => c.type === "diff");

  const todos = { todos: [{ content: "One", status: "completed" }, { content: "Two", status: "pending" }] };
  await ctx.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" });
  report.stops.push((await ask(`call todowrite ${JSON.stringify(todos)}`)).stopReason);
  report.plan = seen.updates.find((u) => u.sessionUpdate === "plan")?.entries?.length;

  // A long command, cancelled once it runs.
  const from = seen.updates.length;
  const running = ask(`call shell ${JSON.stringify({ command: "sleep 600" })}`);
  while (!seen.updates.slice(from).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress")) {
    await new Promise((r) => setImmediate(r));
  }
  await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  report.stops.push((await running).stopReason);
  return sessionId;
});

await withAgent(async (ctx, seen) => {
  await ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  await ctx.request(acp.methods.agent.session.load, { sessionId, cwd: work, mcpServers: [] });
  report.replayed = seen.updates.length;
  const after = await ctx.request(acp.methods.agent.session.prompt, { ...text("and now?"), sessionId });
  report.afterLoad = after.stopReason;
});

console.log(JSON.stringify(report));
