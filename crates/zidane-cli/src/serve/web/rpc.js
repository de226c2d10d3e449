// A JSON-RPC 2.0 client over the server's WebSocket at /acp: calls with
// promises, notifications and requests from the server to handlers. The
// token travels as a WebSocket subprotocol (a browser cannot set headers),
// never in the URL.

export class Rpc {
  constructor(token, handlers) {
    this.token = token;
    this.handlers = handlers;
    this.next = 1;
    this.waiting = new Map();
    this.ws = null;
  }

  // Resolves once connected; rejects when the server refuses.
  open() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const url = `${scheme}//${location.host}/acp`;
    return new Promise((resolve, reject) => {
      let opened = false;
      let ws;
      try {
        ws = new WebSocket(url, ['zidane.v1', `zidane.token.${this.token}`]);
      } catch (e) {
        reject(e);
        return;
      }
      this.ws = ws;
      ws.onopen = () => {
        opened = true;
        resolve();
      };
      ws.onmessage = (e) => this.receive(e.data);
      ws.onclose = (e) => {
        for (const [, w] of this.waiting) w.reject(new Error('connection closed'));
        this.waiting.clear();
        if (!opened) reject(new Error('refused'));
        else this.handlers.closed?.(e);
      };
    });
  }

  close() {
    this.ws?.close();
  }

  send(message) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  call(method, params) {
    const id = this.next++;
    this.send({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  notify(method, params) {
    this.send({ jsonrpc: '2.0', method, params });
  }

  respond(id, result) {
    this.send({ jsonrpc: '2.0', id, result });
  }

  receive(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (m.id !== undefined && m.method === undefined) {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.error) w.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
      else w.resolve(m.result);
    } else if (m.id !== undefined) {
      this.handlers.request?.(m);
    } else if (m.method) {
      this.handlers.notification?.(m);
    }
  }
}
