"""serve_client: the client side of tests/cli/test_serve*.sh against a live `kverify serve
--compile-only`: serve_client.py BASE_URL CHECK ARGS... runs one group of checks, prints what
failed and exits 1 on any failure. Standard library only."""

import asyncio
import http.client
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.environ["KC_ROOT"], "tools"))
import kc_reward  # noqa: E402

RELU = "level1/019_relu"
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)


def request(base, method, path, body=None, headers=None, timeout=600):
    """One request on a fresh connection: (status, headers dict, decoded JSON or text)."""
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    conn.request(method, path, body=data, headers=headers or {})
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = raw.decode("utf-8", "replace")
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, answer


def verify(base, item, headers=None):
    return request(base, "POST", "/v1/verify", item, headers)


def healthy(base):
    status, _, h = request(base, "GET", "/health")
    return status == 200 and isinstance(h, dict) and h.get("status") == "ok"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def basics(base, good_path, bad_path):
    good, bad = read(good_path), read(bad_path)
    status, _, h = request(base, "GET", "/health")
    check(status == 200 and h["compile_only"] and h["gpu_workers"] == 0, f"health: {h}")
    check(h["reward_defaults"]["incorrect"] == -0.25, "--reward-incorrect not the default reward")
    status, hdr, r = verify(base, {"problem_id": RELU, "completion": good})
    check(status == 200 and r.get("verdict") == "compiled", f"good kernel: {status} {r}")
    check(hdr.get("content-type") == "application/json", "answer is not application/json")
    check(r.get("reward") == -0.25 and r.get("reward_suspicious") is False,
          f"reward of a compiled kernel under --reward-incorrect -0.25: {r.get('reward')}")
    check(r.get("problem") == RELU and r.get("kernels"), "result JSON lacks the verifier's fields")
    status, _, r = verify(base, {"problem_id": RELU, "completion": bad})
    check(status == 200 and r.get("verdict") == "compile_error" and "oops" in r.get("compile_log", ""),
          f"bad kernel: {status} {r}")
    status, _, r = verify(base, {"problem_id": RELU, "completion": bad, "reward": {"incorrect": -1}})
    check(r.get("reward") == -1, f"per-request reward parameter ignored: {r.get('reward')}")
    items = [{"problem_id": RELU, "completion": good, "id": "a"},
             {"problem_id": RELU, "completion": bad, "id": 7},
             {"problem_id": RELU, "completion": "I cannot write this kernel.", "id": None}]
    status, _, r = verify(base, {"items": items})
    verdicts = [x.get("verdict") for x in r.get("results", [])] if status == 200 else None
    check(verdicts == ["compiled", "compile_error", "extract_error"], f"batch verdicts: {verdicts}")
    check([x.get("id") for x in r["results"]] == ["a", 7, None], "batch ids not echoed in order")
    check(r.get("reward_params", {}).get("incorrect") == -0.25, "batch lacks reward_params")


def refusals(base, good_path):
    good = read(good_path)
    ok = {"problem_id": RELU, "completion": good}
    cases = [
        (b"{bad", 400, "malformed JSON"),
        (b"[1, 2]", 400, "object"),
        (b"\xff\xfe{}", 400, "malformed JSON"),
        (b'{"problem_id": "level1/019_relu", "completion": "a\\u0000b"}', 400, "malformed JSON"),
        ({"problem_id": RELU}, 400, 'missing field "completion"'),
        ({"completion": good}, 400, 'missing field "problem_id"'),
        ({"problem_id": "../../etc/passwd", "completion": good}, 400, "problem id"),
        ({"problem_id": 19, "completion": good}, 400, "problem id"),
        ({"problem_id": RELU, "completion": 5}, 400, "string"),
        ({"problem_id": "level1/999_nope", "completion": good}, 422, "no problem"),
        ({"items": [ok, {"problem_id": "level1/999_nope", "completion": good}]}, 422, "items[1]"),
        ({"items": [ok, {"problem_id": RELU}]}, 400, "items[1]: missing field"),
        ({"items": []}, 400, "non-empty"),
        ({"items": [ok] * 9}, 413, "over the limit of 8"),
        ({"problem_id": RELU, "completion": "x" * 40000}, 413, "completion"),
        ({"problem_id": RELU, "completion": "x" * 70000}, 413, "over the size limit"),
        (dict(ok, reward={"incorrect": 1e9}), 400, "[-100, 100]"),
        (dict(ok, reward={"speedup_cap": 0}), 400, "speedup_cap"),
        (dict(ok, reward={"bonus": 1}), 400, "unknown reward parameter"),
        (dict(ok, reward=[1]), 400, "object"),
    ]
    for body, want, text in cases:
        status, hdr, r = verify(base, body)
        err = r.get("error", "") if isinstance(r, dict) else ""
        check(status == want and text in err, f"{str(body)[:60]}: want {want} '{text}', got {status} {r}")
        check(hdr.get("content-type") == "application/json", f"{str(body)[:40]}: not JSON")
        check(healthy(base), f"service unhealthy after {str(body)[:60]}")
    # a chunked body (no Content-Length) over the limit: read, dropped, 413
    u = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.request("POST", "/v1/verify", body=iter([b"x" * 30000] * 3), encode_chunked=True,
                 headers={"Transfer-Encoding": "chunked"})
    resp = conn.getresponse()
    check(resp.status == 413 and b"over the limit" in resp.read(), f"chunked too big: {resp.status}")
    conn.close()
    for method, path, want in [("GET", "/v1/verify", 405), ("POST", "/health", 405),
                               ("GET", "/nope", 404), ("POST", "/v2/verify", 404)]:
        status, _, r = request(base, method, path, b"{}" if method == "POST" else None)
        check(status == want and "error" in r, f"{method} {path}: want {want}, got {status} {r}")
    check(healthy(base), "service unhealthy after the refusals")


def concurrent(base, good_path, n):
    good, n = read(good_path), int(n)
    start = threading.Barrier(n)

    def one(i):
        start.wait()
        item = {"problem_id": RELU, "completion": good if i % 2 == 0 else "no code here"}
        return verify(base, item, {"X-Client-Id": f"client-{i % 7}"})

    with ThreadPoolExecutor(max_workers=n) as pool:
        answers = list(pool.map(one, range(n)))
    statuses = [a[0] for a in answers]
    check(statuses == [200] * n, f"{n} concurrent requests: statuses {sorted(set(statuses))}")
    verdicts = [a[2].get("verdict") for a in answers]
    want = ["compiled" if i % 2 == 0 else "extract_error" for i in range(n)]
    check(verdicts == want, "concurrent answers do not match their requests")
    check(healthy(base), "service unhealthy after the concurrent requests")


def raw_send(base, data, read_answer=False):
    u = urllib.parse.urlsplit(base)
    s = socket.create_connection((u.hostname, u.port), timeout=60)
    s.sendall(data)
    if read_answer:
        s.recv(1)
    s.close()


def disconnects(base, good_path):
    good = read(good_path).encode()
    body = json.dumps({"problem_id": RELU, "completion": good.decode()}).encode()
    head = f"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    kinds = [head + body[:50],           # gone mid-body
             head[:30],                  # gone mid-headers
             head + body]                # gone while its item is verified
    with ThreadPoolExecutor(max_workers=30) as pool:
        list(pool.map(lambda i: raw_send(base, kinds[i % 3]), range(30)))
    time.sleep(0.5)
    check(healthy(base), "service unhealthy after clients disconnected")
    status, _, r = verify(base, {"problem_id": RELU, "completion": good.decode()})
    check(status == 200 and r.get("verdict") == "compiled", f"verify after disconnects: {status}")


def adapter(base, good_path, bad_path):
    good, bad = read(good_path), read(bad_path)
    truth = json.dumps({"problem_id": RELU, "verifier": "kverify", "dims": {}, "tolerance": {},
                        "reference_kernel": good})
    score = kc_reward.compute_score("kcorpus/level1", good, truth, {"split": "train", "index": 0})
    check(isinstance(score, float) and score == -0.25, f"compute_score via ground_truth: {score!r}")
    score = kc_reward.compute_score("kcorpus/level1", bad, "", {"problem_id": RELU})
    check(isinstance(score, float) and score == -0.25, f"compute_score via extra_info: {score!r}")
    try:
        kc_reward.compute_score("kcorpus/level1", good, "not json", {})
        check(False, "compute_score without a problem id did not raise")
    except kc_reward.KcRewardError as e:
        check("problem id" in str(e), f"compute_score without a problem id: {e}")
    completions = [good, [{"role": "assistant", "content": bad}], "no code"]
    rewards = kc_reward.trl_reward(["p"] * 3, completions, problem_id=[RELU] * 3)
    check(rewards == [-0.25] * 3 and all(isinstance(x, float) for x in rewards), f"trl_reward: {rewards}")
    rewards = asyncio.run(kc_reward.trl_reward_async(["p"] * 3, completions,
                                                     ground_truth=[truth] * 3))
    check(rewards == [-0.25] * 3, f"trl_reward_async: {rewards}")
    results = kc_reward.verify([(RELU, good), (RELU, bad)], reward={"incorrect": -1})
    check([r["reward"] for r in results] == [-1, -1], f"verify with reward parameters: {results}")
    try:
        kc_reward.compute_score("x", good, "", {"problem_id": "level1/999_nope"})
        check(False, "an unknown problem did not raise")
    except kc_reward.KcRewardError as e:
        check("422" in str(e) and "no problem" in str(e), f"unknown problem: {e}")
    os.environ["KC_REWARD_URL"] = "http://127.0.0.1:9"
    try:
        kc_reward.trl_reward(["p"], [good], problem_id=[RELU])
        check(False, "no server did not raise")
    except kc_reward.KcRewardError as e:
        check("cannot reach" in str(e), f"no server: {e}")


def queue_full(base, good_path, n):
    good, n = read(good_path), int(n)
    start = threading.Barrier(n)

    def one(i):
        start.wait()
        return verify(base, {"problem_id": RELU, "completion": good}, {"X-Client-Id": str(i)})

    with ThreadPoolExecutor(max_workers=n) as pool:
        answers = list(pool.map(one, range(n)))
    statuses = [a[0] for a in answers]
    full = [a for a in answers if a[0] == 503]
    check(statuses.count(200) >= 3 and full, f"queue of 2: statuses {statuses}")
    check(set(statuses) <= {200, 503}, f"statuses other than 200 and 503: {statuses}")
    for _, hdr, r in full[:3]:
        check(hdr.get("retry-after", "").isdigit() and int(hdr["retry-after"]) >= 1,
              f"503 without Retry-After: {hdr}")
        check("queue is full" in r.get("error", ""), f"503 body: {r}")
    status, _, r = verify(base, {"items": [{"problem_id": RELU, "completion": good}] * 3})
    check(status == 413 and "queue holds" in r.get("error", ""), f"batch over the queue: {status} {r}")
    status, _, r = verify(base, {"problem_id": RELU, "completion": good})
    check(status == 200, f"after the burst: {status} {r}")
    status, _, h = request(base, "GET", "/health")
    check(h.get("refused_queue_full", 0) >= len(full), f"health does not count refusals: {h}")


def fairness(base, good_path):
    """One verification thread: client A's batch of 6 is queued first, client B's single item a
    moment later; round-robin answers B before A's batch is done."""
    good = read(good_path)
    done = {}

    def client(name, n):
        body = {"items": [{"problem_id": RELU, "completion": good}] * n}
        status, _, _ = verify(base, body, {"X-Client-Id": name})
        done[name] = (time.monotonic(), status)

    a = threading.Thread(target=client, args=("A", 6))
    a.start()
    time.sleep(0.05)
    b = threading.Thread(target=client, args=("B", 1))
    b.start()
    a.join()
    b.join()
    check(done["A"][1] == 200 and done["B"][1] == 200, f"fairness statuses: {done}")
    check(done["B"][0] < done["A"][0], "client B waited for all of client A's batch")


def main():
    base, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    globals()[what](base, *args)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
