"""Execute a notebook headless with nbclient and keep the executed copy.

``python -m jupyter_sched.executors.run_notebook IN.ipynb OUT.ipynb [--timeout SECONDS]``

Each cell's stream output and errors are printed as the cell finishes, so the job's log shows
progress while it runs. The executed notebook (outputs included) is written to ``OUT`` whether
the run succeeds or a cell fails. Exit status: 0 success, 1 a cell raised, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _print_outputs(cell: Any, index: int, total: int) -> None:
    print(f"[jupyter_sched] cell {index + 1}/{total} done", flush=True)
    for output in cell.get("outputs", ()):
        if output.get("output_type") == "stream":
            stream = sys.stderr if output.get("name") == "stderr" else sys.stdout
            stream.write(output.get("text", ""))
            stream.flush()
        elif output.get("output_type") == "error":
            print("\n".join(output.get("traceback", ())), file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the notebook; see the module docstring."""
    parser = argparse.ArgumentParser(prog="run_notebook", description="execute a notebook headless")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--timeout", type=float, default=None, help="seconds per cell (default: none)")
    args = parser.parse_args(argv)

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    try:
        nb = nbformat.read(str(args.notebook), as_version=4)  # type: ignore[no-untyped-call]
    except (OSError, ValueError) as exc:
        print(f"[jupyter_sched] cannot read notebook {args.notebook}: {exc}", file=sys.stderr)
        return 2
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    total = len(code_cells)
    kernel = nb.metadata.get("kernelspec", {}).get("name", "python3")
    client = NotebookClient(nb, timeout=args.timeout, kernel_name=kernel,
                            resources={"metadata": {"path": str(Path.cwd())}})
    client.on_cell_executed = lambda cell, cell_index, **_: _print_outputs(
        cell, code_cells.index(cell) if cell in code_cells else cell_index, total)
    status = 0
    try:
        client.execute()
    except CellExecutionError as exc:
        print(f"[jupyter_sched] a cell failed: {exc.ename}: {exc.evalue}", file=sys.stderr, flush=True)
        status = 1
    finally:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(args.output))  # type: ignore[no-untyped-call]
        print(f"[jupyter_sched] executed notebook written to {args.output}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
