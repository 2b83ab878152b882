"""kc_reward: rewards from a running `kverify serve` for RL trainers (standard library only).

    kverify serve --port 8765 [--gpus 0,1] [--db rewards.db]
    export KC_REWARD_URL=http://127.0.0.1:8765

verl (custom_reward_function.path = tools/kc_reward.py, name = compute_score):
    compute_score(data_source, solution_str, ground_truth, extra_info) -> float
    The problem id is read from extra_info["problem_id"], else from ground_truth (the JSON text,
    or dict, that `kexport --format rl` writes).

TRL (GRPOTrainer(reward_funcs=[kc_reward.trl_reward]) or [kc_reward.trl_reward_async]):
    trl_reward(prompts, completions, **kwargs) -> list[float]
    The problem ids come from the dataset column "problem_id" (or "extra_info" / "ground_truth"
    as above), which TRL passes as keyword arguments. The whole batch goes in one request.

The reward is kverify's verdict and speed under kcurate's rule (README: "Reward service").
An item the service could not verify (a system error, not a bad kernel) raises KcRewardError,
unless KC_REWARD_ON_ERROR holds a number to use as its reward instead. A full queue (HTTP 503)
is retried after its Retry-After, up to KC_REWARD_RETRIES times (default 20).

As a command, for a quick look: python3 tools/kc_reward.py --problem ID FILE...
"""

import asyncio
import json
import os
import sys
import time
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8765"


class KcRewardError(RuntimeError):
    """The service refused a request or could not verify an item."""


def _url():
    return os.environ.get("KC_REWARD_URL", DEFAULT_URL).rstrip("/")


def _timeout():
    return float(os.environ.get("KC_REWARD_TIMEOUT", "3600"))


def _post(path, body, url=None):
    """POSTs body (a dict) as JSON; returns the decoded answer, retrying a full queue (503)."""
    data = json.dumps(body).encode("utf-8")
    retries = int(os.environ.get("KC_REWARD_RETRIES", "20"))
    for attempt in range(retries + 1):
        req = urllib.request.Request((url or _url()) + path, data=data, method="POST",
                                     headers={"Content-Type": "application/json",
                                              "X-Client-Id": str(os.getpid())})
        try:
            with urllib.request.urlopen(req, timeout=_timeout()) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            if e.code == 503 and attempt < retries:
                time.sleep(float(e.headers.get("Retry-After") or 1))
                continue
            try:
                message = json.loads(text).get("error", text)
            except ValueError:
                message = text
            raise KcRewardError(f"kverify serve answered {e.code}: {message}") from None
        except urllib.error.URLError as e:
            raise KcRewardError(f"cannot reach kverify serve at {url or _url()}: {e.reason} "
                                "(start it with `kverify serve --port P`, set KC_REWARD_URL)") from None
    raise AssertionError("unreachable")


def verify(items, reward=None, url=None):
    """Verifies [(problem_id, completion), ...] in one request; returns the result dicts (each
    with "verdict" and "reward", or "error"), in order. reward: per-request reward parameters
    (correct, incorrect, speedup_weight, speedup_cap, suspicious_speedup)."""
    body = {"items": [{"problem_id": p, "completion": c} for p, c in items]}
    if reward:
        body["reward"] = reward
    return _post("/v1/verify", body, url)["results"]


def _reward_of(result):
    if "error" not in result:
        return float(result["reward"])
    substitute = os.environ.get("KC_REWARD_ON_ERROR")
    if substitute is None:
        raise KcRewardError(f"{result.get('problem', '?')}: {result['error']}")
    return float(substitute)


def _problem_id(extra_info=None, ground_truth=None):
    if isinstance(extra_info, dict) and extra_info.get("problem_id"):
        return extra_info["problem_id"]
    truth = ground_truth
    if isinstance(truth, (str, bytes)):
        try:
            truth = json.loads(truth)
        except ValueError:
            truth = None
    if isinstance(truth, dict) and truth.get("problem_id"):
        return truth["problem_id"]
    raise KcRewardError("no problem id: expected extra_info['problem_id'] or a ground_truth "
                        "JSON with \"problem_id\" (as kexport --format rl writes them)")


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    """verl's reward function: the reward of one completion."""
    del data_source, kwargs
    pid = _problem_id(extra_info, ground_truth)
    return _reward_of(verify([(pid, solution_str)])[0])


def _completion_text(completion):
    """A plain completion, or TRL's conversational form (a list of messages): the last
    message's content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    raise KcRewardError(f"cannot read a completion of type {type(completion).__name__}")


def _batch_items(completions, kwargs):
    n = len(completions)

    def column(name):
        values = kwargs.get(name)
        return values if isinstance(values, (list, tuple)) and len(values) == n else [None] * n

    ids, extra, truth = column("problem_id"), column("extra_info"), column("ground_truth")
    items = []
    for i, completion in enumerate(completions):
        pid = ids[i] or _problem_id(extra[i], truth[i])
        items.append((pid, _completion_text(completion)))
    return items


def trl_reward(prompts, completions, **kwargs):
    """TRL's reward function form: one reward per completion, the batch in one request."""
    del prompts
    if not completions:
        return []
    return [_reward_of(r) for r in verify(_batch_items(completions, kwargs))]


async def trl_reward_async(prompts, completions, **kwargs):
    """The same as trl_reward, awaitable: the batch goes in one request on a worker thread, so
    the trainer's event loop runs on while the kernels are verified."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, lambda: trl_reward(prompts, completions, **kwargs))


def main(argv):
    if len(argv) < 3 or argv[0] != "--problem":
        print("usage: kc_reward.py --problem ID FILE...  (server: $KC_REWARD_URL, default "
              f"{DEFAULT_URL})", file=sys.stderr)
        return 2
    items = []
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            items.append((argv[1], f.read()))
    for path, result in zip(argv[2:], verify(items)):
        print(f"{path}: {result.get('verdict', 'error')} reward "
              f"{result.get('reward', result.get('error'))}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
