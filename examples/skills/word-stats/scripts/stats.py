"""Count lines and words of a file; print them and the most frequent words as JSON."""

import argparse
import collections
import json
import re
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    try:
        with open(args.path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        print(f"cannot read {args.path}: {exc.strerror}", file=sys.stderr)
        return 1
    words = re.findall(r"[a-z']+", text.lower())
    top = collections.Counter(words).most_common(max(args.top, 0))
    print(json.dumps({"lines": text.count("\n"), "words": len(words), "top": top}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
