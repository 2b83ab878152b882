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

The reward is kverify's verdict and speed under kcurate's rule (docs/REWARD_SERVICE.md).
An item the service could not verify (a system error, not a bad kernel) raises KcRewardError,
unless KC_REWARD_ON_ERROR holds a number to use as its reward instead. A full queue (HTTP 503)
is retried after its Retry-After, up to KC_REWARD_RETRIES times (default 20). A service started
with --token-file needs its token: KC_REWARD_TOKEN holds it (sent as "Authorization: Bearer").

As a command, for a quick look: python3 tools/kc_reward.py --problem ID FILE...
(exit status 0 done, 1 the service refused or could not be reached, 2 usage error).
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


def _env_number(name, default, kind=float):
    text = os.environ.get(name, default)
    try:
        value = kind(text)
    except ValueError:
        raise KcRewardError(f"{name} must be a number, not {text!r}") from None
    if value < 0:
        raise KcRewardError(f"{name} must not be negative, not {text!r}")
    return value


def _timeout():
    return _env_number("KC_REWARD_TIMEOUT", "3600")


def _headers():
    headers = {"Content-Type": "application/json", "X-Client-Id": str(os.getpid())}
    token = os.environ.get("KC_REWARD_TOKEN", "").strip()
    if token:
        headers["Authorization"] = "Bearer " + token
    return headers


def _post(path, body, url=None):
    """POSTs body (a dict) as JSON; returns the decoded answer, retrying a full queue (503)."""
    data = json.dumps(body).encode("utf-8")
    retries = _env_number("KC_REWARD_RETRIES", "20", int)
    for attempt in range(retries + 1):
        req = urllib.request.Request((url or _url()) + path, data=data, method="POST",
                                     headers=_headers())
        try:
            with urllib.request.urlopen(req, timeout=_timeout()) as resp:
                try:
                    return json.loads(resp.read().decode("utf-8"))
                except ValueError:
                    raise KcRewardError(f"{url or _url()} answered something that is not JSON "
                                        "(is it kverify serve?)") from None
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            if e.code == 503 and attempt < retries:
                time.sleep(float(e.headers.get("Retry-After") or 1))
                continue
            try:
                message = json.loads(text).get("error", text)
            except (ValueError, AttributeError):
                message = text.strip()
            hint = ""
            if e.code == 401 and os.environ.get("KC_REWARD_TOKEN", "").strip():
                hint = " (the token in KC_REWARD_TOKEN was sent and refused)"
            raise KcRewardError(f"kverify serve answered {e.code}: {message}{hint}") from None
        except urllib.error.URLError as e:
            raise KcRewardError(f"cannot reach kverify serve at {url or _url()}: {e.reason} "
                                "(start it with `kverify serve --port P`, set KC_REWARD_URL)") from None
        except (OSError, ValueError) as e:  # a reset connection, a timeout, a bad URL
            raise KcRewardError(f"kverify serve at {url or _url()}: {e}") from None
    raise AssertionError("unreachable")


def verify(items, reward=None, url=None):
    """Verifies [(problem_id, completion), ...] in one request; returns the result dicts (each
    with "verdict" and "reward", or "error"), in order. reward: per-request reward parameters
    (correct, incorrect, speedup_weight, speedup_cap, suspicious_speedup)."""
    body = {"items": [{"problem_id": p, "completion": c} for p, c in items]}
    if reward:
        body["reward"] = reward
    answer = _post("/v1/verify", body, url)
    if not isinstance(answer, dict) or not isinstance(answer.get("results"), list):
        raise KcRewardError(f"{url or _url()} answered without \"results\" (is it kverify serve?)")
    return answer["results"]


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


USAGE = f"""usage: kc_reward.py --problem ID FILE...
    verifies each FILE (an LLM answer or kc-cuda v1 code) for problem ID with a running
    `kverify serve` and prints its verdict and reward, one line each.
    The service: $KC_REWARD_URL (default {DEFAULT_URL}); its token, when it was started with
    --token-file: $KC_REWARD_TOKEN. --problem=ID works too.
    Exit status: 0 done, 1 the service refused or could not be reached, or a FILE could not be
    read, 2 usage error.
"""


class _UsageError(Exception):
    pass


def _parse_args(argv):
    """(problem id, files) from argv; -h/--help prints the usage and exits 0."""
    if "-h" in argv or "--help" in argv:
        sys.stdout.write(USAGE)
        sys.exit(0)
    problem, files, i = None, [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--problem":
            if i + 1 >= len(argv) or argv[i + 1].startswith("--"):
                raise _UsageError("--problem needs a value")
            problem, i = argv[i + 1], i + 2
            continue
        if arg.startswith("--problem="):
            problem = arg.split("=", 1)[1]
        elif arg == "--":
            files.extend(argv[i + 1:])
            break
        elif arg.startswith("-") and arg != "-":
            raise _UsageError(f"unknown option '{arg.split('=', 1)[0]}'")
        else:
            files.append(arg)
        i += 1
    if not problem:
        raise _UsageError("--problem ID is required")
    if not files:
        raise _UsageError("no FILE to verify")
    return problem, files


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise KcRewardError(f"cannot read {path}: {reason}") from None


def main(argv):
    try:
        problem, files = _parse_args(argv)
    except _UsageError as e:
        print(f"kc_reward: error: {e}; see 'kc_reward.py --help'", file=sys.stderr)
        return 2
    try:
        items = [(problem, _read(path)) for path in files]
        for path, result in zip(files, verify(items)):
            print(f"{path}: {result.get('verdict', 'error')} reward "
                  f"{result.get('reward', result.get('error'))}")
    except KcRewardError as e:
        print(f"kc_reward: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kc_reward: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
