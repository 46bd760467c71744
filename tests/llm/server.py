#!/usr/bin/env python3
"""A scripted LLM server for kope's integration tests.

Speaks the real wire protocols over HTTP/1.1 on 127.0.0.1: OpenAI's
POST .../chat/completions (SSE "data:" chunks ending in "data: [DONE]", or
one JSON body) and Anthropic's POST /v1/messages (named SSE events, or one
JSON body). Streams go out with chunked transfer encoding, and events are
split across chunks so the client must reassemble them.

usage: server.py SCRIPT.json LOG.jsonl PORTFILE

SCRIPT is a JSON list of replies, served in order (the last one repeats).
Each reply is an object:
  mode        "sse" (default) | "json" | "raw"; the protocol follows the
              request path (/messages: anthropic, else openai)
  status      HTTP status (default 200); with a non-2xx status the body is
              "body" (default an error object) and no stream is sent
  headers     extra response headers, e.g. {"Retry-After": "1"}
  text        the model's text, or
  kernel      a file under tests/llm/kernels, wrapped with "header" lines
              (a dict LAYER/THOUGHT/TITLE/RATIONALE) in a ```c fence
  json_kernel a kernel file as a JSON object reply: "header" fields plus
              "source"
  finish      finish reason (default "stop" / "end_turn")
  usage       [input_tokens, output_tokens] (default [1000, len(text)//4])
  stall_after stream this many characters of text, then go silent
  bad_json_after  after this many characters, send a malformed event
  body        raw body for mode "raw" or error statuses
  sse         raw event-stream text sent as is (mode "sse")
Every request is appended to LOG as one JSON line: time, path, headers,
body (parsed), and the index of the reply served.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
LOCK = threading.Lock()
STATE = {"next": 0}


def reply_text(r):
    if "json_kernel" in r:
        code = open(os.path.join(HERE, "kernels", r["json_kernel"])).read()
        return json.dumps(dict(r.get("header", {}), source=code))
    if "kernel" in r:
        head = "".join(f"{k}: {v}\n" for k, v in r.get("header", {}).items())
        code = open(os.path.join(HERE, "kernels", r["kernel"])).read()
        return f"{head}\n```c\n{code}```\n"
    return r.get("text", "")


def text_len(data):
    """Characters of model text an event carries."""
    if not isinstance(data, dict):
        return 0
    if "delta" in data:
        return len(data["delta"].get("text", ""))
    ch = data.get("choices") or [{}]
    return len(ch[0].get("delta", {}).get("content") or "")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def take(self):
        with LOCK:
            i = STATE["next"]
            STATE["next"] += 1
        return min(i, len(SCRIPT) - 1), SCRIPT[min(i, len(SCRIPT) - 1)]

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(n)
        idx, r = self.take()
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with LOCK, open(LOG, "a") as f:
            f.write(json.dumps({"t": time.time(), "path": self.path, "reply": idx,
                                "headers": dict(self.headers), "body": body}) + "\n")
        anthropic = self.path.endswith("/messages")
        status = r.get("status", 200)
        if status >= 300 or r.get("mode") == "raw":
            default = {"error": {"type": "test_error", "message": f"scripted status {status}"}}
            self.send_whole(status, r.get("body", json.dumps(default)), r.get("headers", {}))
        elif r.get("mode") == "json":
            doc = self.anthropic_doc(r) if anthropic else self.openai_doc(r, body)
            self.send_whole(200, json.dumps(doc), r.get("headers", {}))
        else:
            self.stream(r, anthropic, body)

    def usage(self, r):
        text = reply_text(r)
        return r.get("usage", [1000, max(1, len(text) // 4)])

    def openai_doc(self, r, req):
        u = self.usage(r)
        return {"id": "cmpl-1", "object": "chat.completion", "model": req.get("model", "m"),
                "choices": [{"index": 0, "message": {"role": "assistant",
                                                     "content": reply_text(r)},
                             "finish_reason": r.get("finish", "stop")}],
                "usage": {"prompt_tokens": u[0], "completion_tokens": u[1],
                          "total_tokens": u[0] + u[1]}}

    def anthropic_doc(self, r):
        u = self.usage(r)
        return {"id": "msg_1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": reply_text(r)}],
                "stop_reason": r.get("finish", "end_turn"),
                "usage": {"input_tokens": u[0], "output_tokens": u[1]}}

    def send_whole(self, status, text, headers):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def chunk(self, data):
        """Send data as two HTTP chunks (split mid-event)."""
        data = data.encode()
        half = len(data) // 2
        for part in (data[:half], data[half:]):
            if part:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        self.wfile.flush()

    def events(self, r, anthropic, req):
        """The stream as (sse text) pieces, with stall/bad-json markers."""
        text, u = reply_text(r), self.usage(r)
        pieces = [text[i:i + 40] for i in range(0, len(text), 40)]
        out = []
        if anthropic:
            out.append(("message_start", {"type": "message_start", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "content": [],
                "usage": {"input_tokens": u[0], "output_tokens": 1}}}))
            out.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                 "content_block": {"type": "text", "text": ""}}))
            out.append(("ping", {"type": "ping"}))
            for p in pieces:
                out.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                     "delta": {"type": "text_delta", "text": p}}))
            out.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
            out.append(("message_delta", {"type": "message_delta", "delta": {
                "stop_reason": r.get("finish", "end_turn")}, "usage": {"output_tokens": u[1]}}))
            out.append(("message_stop", {"type": "message_stop"}))
        else:
            base = {"id": "c1", "object": "chat.completion.chunk", "model": req.get("model")}
            out.append((None, dict(base, choices=[{"index": 0, "delta": {"role": "assistant"},
                                                   "finish_reason": None}])))
            for p in pieces:
                out.append((None, dict(base, choices=[{"index": 0, "delta": {"content": p},
                                                       "finish_reason": None}])))
            out.append((None, dict(base, choices=[{"index": 0, "delta": {},
                                                   "finish_reason": r.get("finish", "stop")}])))
            out.append((None, dict(base, choices=[], usage={
                "prompt_tokens": u[0], "completion_tokens": u[1],
                "total_tokens": u[0] + u[1]})))
            out.append((None, "[DONE]"))
        return out

    def stream(self, r, anthropic, req):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if "sse" in r:
            self.chunk(r["sse"])
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        sent = 0
        for name, data in self.events(r, anthropic, req):
            payload = data if isinstance(data, str) else json.dumps(data)
            ev = (f"event: {name}\n" if name else "") + f"data: {payload}\n\n"
            if "bad_json_after" in r and sent >= r["bad_json_after"]:
                self.chunk(("event: content_block_delta\n" if anthropic else "") +
                           'data: {"choices": [{"delta": {"content": "x"\n\n')
                r = dict(r)
                del r["bad_json_after"]
            if "stall_after" in r and sent >= r["stall_after"]:
                time.sleep(120)
                return
            self.chunk(ev)
            sent += text_len(data)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    with open(sys.argv[3] + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(sys.argv[3] + ".tmp", sys.argv[3])
    srv.serve_forever()


if __name__ == "__main__":
    main()
