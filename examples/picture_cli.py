"""The command line every picture script shares: ``python examples/<script>.py OUT``.

The folder is required, so a script never rewrites docs/images unless asked
(``python examples/<script>.py docs/images``, as ``make docs-pictures`` does), and ``--help``
prints the script's own description instead of creating a folder named ``--help``.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def main(make, doc: str, argv=None) -> list:
    """Parse ``argv`` (default: the command line), run ``make(out)``, say what it wrote."""
    summary, _, rest = doc.strip().partition("\n")
    parser = argparse.ArgumentParser(description=summary, epilog=rest.strip() or None,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path,
                        help="folder to write the pictures into (docs/images updates the docs)")
    args = parser.parse_args(argv)
    written = make(args.out)
    for path in written:
        print(f"wrote {path}")
    return written
