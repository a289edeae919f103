#!/usr/bin/env python3
"""A test objective for internal/external: one JSON request per line on stdin.

The score of an object is its length in characters; the object, as received,
is appended to $SCORER_LOG (one JSON string per line) when that is set. Some
objects ask for a behaviour instead:
  sleep:S        sleep S seconds, then reply
  error:MSG      reply {"error": MSG}
  nan            reply the score NaN (json.dumps writes the bare word NaN)
  string         reply the score "abc"
  null           reply the score null
  noise          write lines that are not replies, a reply to another id, then the reply
  crash          exit with status 3 without replying
  crash-once:F   exit with status 3 when the file F does not exist (creating it), else reply
  hang           never reply
  exit-after     reply, then exit (the next object finds the program gone)
Every call is counted in $SCORER_COUNT (one line per object) when that is set.
"""
import json
import math
import os
import sys
import time


def reply(d):
    sys.stdout.write(json.dumps(d) + "\n")
    sys.stdout.flush()


def main():
    log = os.environ.get("SCORER_LOG")
    count = os.environ.get("SCORER_COUNT")
    for line in sys.stdin:
        req = json.loads(line)
        i, obj = req["id"], req["object"]
        if count:
            with open(count, "a") as f:
                f.write(json.dumps(obj) + "\n")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(obj) + "\n")
        if obj.startswith("sleep:"):
            time.sleep(float(obj[6:]))
            reply({"id": i, "score": float(len(obj))})
        elif obj.startswith("error:"):
            reply({"id": i, "error": obj[6:]})
        elif obj == "nan":
            reply({"id": i, "score": math.nan})
        elif obj == "string":
            reply({"id": i, "score": "abc"})
        elif obj == "null":
            reply({"id": i, "score": None})
        elif obj == "noise":
            print("loading model...", flush=True)
            print("{not json", flush=True)
            reply({"id": i + 1000, "score": -1})
            reply({"id": str(i), "score": 5})
        elif obj == "crash":
            sys.stderr.write("scorer: asked to crash\n")
            sys.exit(3)
        elif obj.startswith("crash-once:"):
            marker = obj[len("crash-once:"):]
            if not os.path.exists(marker):
                open(marker, "w").close()
                sys.stderr.write("scorer: crashing once\n")
                sys.exit(3)
            reply({"id": i, "score": 1.0})
        elif obj == "hang":
            time.sleep(3600)
        elif obj == "exit-after":
            reply({"id": i, "score": 2.0})
            return
        else:
            reply({"id": i, "score": float(len(obj))})


if __name__ == "__main__":
    main()
