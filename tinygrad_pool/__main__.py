"""Command line: ``python -m tinygrad_pool demo --out graphs/``.

The demo trains the seed article's network (examples/article_network.py) and writes its graph,
after the first backward pass, as PNG pictures with values, gradients and argmax cells.
"""
import argparse
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def demo(out: str) -> int:
    script = EXAMPLES / "article_network.py"
    if not script.exists():
        print(f"tinygrad_pool demo: {script} not found. The demo runs the examples/ folder of a "
              f"source checkout (git clone, then `make demo`).", file=sys.stderr)
        return 2
    sys.path.insert(0, str(EXAMPLES))
    import article_network  # noqa: E402  (found through the line above)
    return article_network.main(["--graphs", out])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tinygrad_pool",
                                     description="tinygrad_pool command line")
    commands = parser.add_subparsers(dest="command", required=True)
    run_demo = commands.add_parser("demo", help="train the article's network and draw its graphs")
    run_demo.add_argument("--out", default="graphs", help="folder for the PNGs (default: graphs)")
    args = parser.parse_args(argv)
    return demo(args.out)


if __name__ == "__main__":
    sys.exit(main())
