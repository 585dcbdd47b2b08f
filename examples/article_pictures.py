"""The seed article's hand-drawn pictures, generated from a real run of its network.

For the first training step (image x1) of each example this writes
  * ``<example>_graph.png`` — the computation graph after the first backward pass, with values,
    gradients and the max-pool argmax cells (the article's "blue circles");
  * ``<example>_backprop.png`` — the article's derivation as matrices, in three rows that read
    at 1,000 px: the forward pass; the backward pass through the max pool (the 2×2 upstream
    gradient repeated over its windows, times the mask of maxima); the backward pass through
    ReLU and the convolution, down to the kernel gradient.

Every number is the engine's own, from the real run, rounded by one rule (``number``), and each
panel's title is a formula the numbers satisfy: ``backprop_picture`` checks every one of them
against the engine before it draws.

Run:  python examples/article_pictures.py DIR     (docs/images to update the docs)
"""
from __future__ import annotations

import html
import sys
from pathlib import Path

import graphviz
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tinygrad_pool.viz import save_graph
from tinygrad_pool.viz.graph import STYLE

sys.path.insert(0, str(Path(__file__).resolve().parent))
import article_network as article  # noqa: E402

ARGMAX_COLOUR, TIE_COLOUR = STYLE["argmax"], STYLE["tie"]  # the colours draw_graph uses
DECIMALS = 3
ROUNDING = (f"All numbers are the engine's, rounded to {DECIMALS} decimals "
            f"(x and the mask are exact integers).")


def number(value: float, decimals: int = DECIMALS) -> str:
    """The one rounding rule of every picture here: ``decimals`` places, and never "-0.000"
    (a tiny negative rounds to -0.0, which + 0.0 turns into 0.0)."""
    return f"{round(float(value), decimals) + 0.0:.{decimals}f}"


def first_step(example: article.Example, ties: str = "all") -> dict:
    """One forward + backward pass on x1 with every intermediate's gradient kept."""
    net = article.ArticleNetwork(*example.initial_weights(), example.activation, ties)
    layers = net.layers(article.X1)
    for tensor in layers.values():
        if tensor.requires_grad and not tensor.is_leaf:
            tensor.retain_grad()
    cost = net.cost(article.X1, example.targets()[0], layers)
    cost.backward(retain_graph=True)  # keep the saved argmax for the picture
    return {"net": net, "layers": layers, "cost": cost}


def panel(title: str, matrix, shade=None, note: str = "", integers: bool = False) -> str:
    """One matrix as an HTML-like table: a bold title (``\\n`` breaks it), the cells (shaded
    where ``shade`` names a colour), an optional small note underneath. The cells have a fixed
    size, so a panel never stretches to the height of a taller neighbour."""
    matrix = np.atleast_2d(np.squeeze(np.asarray(matrix)))
    texts = [[str(int(v)) if integers else number(v) for v in row] for row in matrix]
    width = round(6.2 * max(len(t) for row in texts for t in row)) + 9  # points: ~6.2 a digit
    cells = "".join(
        "<TR>" + "".join(f'<TD FIXEDSIZE="TRUE" WIDTH="{width}" HEIGHT="19" BGCOLOR="'
                         f'{shade[r, c] if shade is not None and shade[r, c] else "white"}">'
                         f"{text}</TD>" for c, text in enumerate(row)) + "</TR>"
        for r, row in enumerate(texts))
    grid = (f'<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" COLOR="#999999" FIXEDSIZE="TRUE" '
            f'WIDTH="{width * matrix.shape[1]}" HEIGHT="{19 * matrix.shape[0]}">{cells}</TABLE>')
    title = "<BR/>".join(html.escape(line) for line in title.split("\n"))
    rows = f"<TR><TD><B>{title}</B></TD></TR><TR><TD>{grid}</TD></TR>"
    if note:
        rows += f'<TR><TD><FONT POINT-SIZE="10">{html.escape(note)}</FONT></TD></TR>'
    return f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="1">{rows}</TABLE>'


def arrow(label: str) -> str:
    """Between two panels: an arrow saying what turns the left one into the right one."""
    text = "<BR/>".join(html.escape(line) for line in label.split("\n"))
    return f'<FONT POINT-SIZE="10">{text}</FONT><BR/><FONT POINT-SIZE="18">→</FONT>'


def symbol(text: str) -> str:
    """Between two panels: an operator of the equation the row writes out (· or =)."""
    return f'<FONT POINT-SIZE="22"><B>{html.escape(text)}</B></FONT>'


def picture(title: str, rows: list, caption: str, name: str) -> graphviz.Digraph:
    """Rows of (heading, [panel, arrow or symbol, ...]), each read from left to right, one
    under the other, then the caption: one HTML-like table in one node, so the layout is fixed
    (not left to dot's placement). Fixed fonts and dpi: the same numbers give the same pixels."""
    body = [f'<TR><TD ALIGN="LEFT"><FONT POINT-SIZE="15"><B>{html.escape(title)}</B></FONT></TD></TR>']
    for heading, items in rows:
        body.append(f'<TR><TD ALIGN="LEFT" CELLPADDING="4"><FONT POINT-SIZE="12"><I>'
                    f'{html.escape(heading)}</I></FONT></TD></TR>')
        inner = "".join(f"<TD>{item}</TD>" for item in items)
        body.append(f'<TR><TD ALIGN="LEFT"><TABLE BORDER="0" CELLSPACING="4">'
                    f"<TR>{inner}</TR></TABLE></TD></TR>")
    lines = '<BR ALIGN="LEFT"/>'.join(html.escape(line) for line in caption.split("\n"))
    body.append(f'<TR><TD ALIGN="LEFT" CELLPADDING="4"><FONT POINT-SIZE="10">{lines}'
                f'<BR ALIGN="LEFT"/></FONT></TD></TR>')
    g = graphviz.Digraph(name, graph_attr={"dpi": "96", "pad": "0.1", "bgcolor": "white"},
                         node_attr={"shape": "plaintext", "fontname": "Helvetica",
                                    "fontsize": "11", "margin": "0"})
    g.node("figure", '<<TABLE BORDER="0" CELLSPACING="0">' + "".join(body) + "</TABLE>>")
    return g


def _correlate(image: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Valid cross-correlation; the article's convolution x ∗ k is _correlate(x, rot180(k))."""
    return np.einsum("abij,ij->ab", sliding_window_view(image, kernel.shape), kernel)


def _holds(claim: str, left, right) -> None:
    """A panel title is a formula: refuse to draw one the engine's numbers do not satisfy."""
    if not np.allclose(left, right, rtol=1e-12, atol=1e-12):
        raise AssertionError(f"article_pictures: the figure would claim {claim}, but the "
                             f"engine's numbers differ: {left} vs {right}")


def backprop_picture(example: article.Example, step: dict) -> graphviz.Digraph:
    """The article's max-pool backward pass, drawn with the numbers of the real first step."""
    layers, net = step["layers"], step["net"]
    relu = example.activation
    pool_name = "ReLU(L1)" if relu else "L1"
    x, w1 = layers["x"].numpy()[0, 0], net.w1.numpy()
    l1, l1max = layers["L1"].numpy()[0, 0], layers["L1Max"].numpy()[0, 0]
    pool_input = layers["L1A"] if relu else layers["L1"]
    pool_node = layers["L1Max"].grad_fn
    upstream = layers["L1Max"].grad.numpy()[0, 0]
    repeated = upstream.repeat(2, axis=0).repeat(2, axis=1)
    mask = pool_input.numpy()[0, 0] == l1max.repeat(2, axis=0).repeat(2, axis=1)
    routed = pool_input.grad.numpy()[0, 0]
    grad_l1, grad_w1 = layers["L1"].grad.numpy()[0, 0], net.w1.grad.numpy()
    argmax = np.zeros(16, dtype=bool)
    argmax[pool_node.argmax.ravel()] = True  # the positions max_pool2d stored
    shade = np.where(argmax.reshape(4, 4), ARGMAX_COLOUR, np.where(mask, TIE_COLOUR, ""))

    _holds("L1 = x ∗ W1", _correlate(x, np.rot90(w1, 2)), l1)
    if pool_node.attrs["ties"] == "all":  # the article's rule is what the mask computes
        _holds(f"∂cost/∂{pool_name} = mask · repeat(∂cost/∂L1Max)", mask * repeated, routed)
    if relu:
        _holds("∂cost/∂L1 = ∂cost/∂ReLU(L1) · [L1 > 0]", routed * (l1 > 0), grad_l1)
    _holds("∂cost/∂W1 = rot180(x ∗ rot180(∂cost/∂L1))",
           np.rot90(_correlate(x, grad_l1), 2), grad_w1)

    stacked = (f'<TABLE BORDER="0" CELLSPACING="4"><TR><TD>{panel("x (image x1)", x, integers=True)}'
               f'</TD></TR><TR><TD>{panel("W1 (kernel)", w1)}</TD></TR></TABLE>')
    forward = [stacked, arrow("conv"), panel("L1 = x ∗ W1", l1)]
    if relu:
        forward += [arrow("ReLU"), panel("ReLU(L1)", pool_input.numpy(), shade)]
    forward += [arrow("max of\neach 2×2\nwindow"),
                panel("L1Max =\nmax_pool2d(\nReLU(L1), 2)" if relu else "L1Max =\nmax_pool2d(L1, 2)", l1max)]
    through_pool = [
        panel("∂cost/∂L1Max\n(upstream, 2×2)", upstream), arrow("repeat 2×2"),
        panel("repeat(∂cost/∂L1Max)\n(each entry over\nits 2×2 window)", repeated), symbol("·"),
        panel(f"mask =\n({pool_name} ==\nrepeat(L1Max))", mask, shade, integers=True), symbol("="),
        panel(f"∂cost/∂{pool_name} =\nmask ·\nrepeat(∂cost/∂L1Max)", routed, shade)]
    kernel_title = "∂cost/∂W1 =\nrot180(x ∗ rot180(∂cost/∂L1))"
    if relu:
        to_kernel = [panel("ReLU'(L1) = [L1 > 0]", l1 > 0, integers=True),
                     arrow("· ∂cost/∂ReLU(L1)\n(row 2)"),
                     panel("∂cost/∂L1 =\n∂cost/∂ReLU(L1) · [L1 > 0]", grad_l1),
                     arrow("with x"), panel(kernel_title, grad_w1)]
        rows = [("1 · forward", forward), ("2 · backward through the max pool", through_pool),
                ("3 · backward through ReLU and the convolution", to_kernel)]
    else:
        rows = [("1 · forward", forward), ("2 · backward through the max pool", through_pool),
                ("3 · backward through the convolution", [
                    panel("∂cost/∂L1\n(row 2's result)", grad_l1), arrow("with x"),
                    panel(kernel_title, grad_w1)])]
    rule = pool_node.attrs["ties"]
    caption = (
        "Dark blue: the cell max_pool2d stores as its window's argmax (the first maximum).\n"
        + (f"Light blue: another cell equal to its window's maximum; with ties='{rule}'"
           + (" (the article's rule)\nit gets the window's full gradient too, as the mask says."
              if rule == "all" else ".") if (mask & ~argmax.reshape(4, 4)).any() else
           "No window holds its maximum twice here, so every rule of ties= routes the same.")
        + "\n· is the elementwise product; ∗ the article's 2-D convolution (valid, kernel flipped).\n"
        + ROUNDING)
    title = f"{example.title}: the first training step (image x1)"
    return picture(title, rows, caption, f"{example.title} backprop")


def render_png(graph: graphviz.Digraph, path: Path) -> Path:
    """Write a Digraph as PNG through `dot`; the bytes are the same on every run."""
    path.write_bytes(graph.pipe(format="png"))
    return path


def make(out_dir) -> list:
    """Write the article's four pictures into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for key, example in (("example1", article.EXAMPLE_1), ("example2", article.EXAMPLE_2)):
        step = first_step(example)
        written.append(save_graph(step["cost"], out_dir / f"{key}_graph.png",
                                  show_values=True, show_saved=True))
        written.append(render_png(backprop_picture(example, step), out_dir / f"{key}_backprop.png"))
    return [Path(p) for p in written]


write_pictures = make  # the name examples/article_network.py --graphs calls


if __name__ == "__main__":
    import picture_cli  # (examples/ is on sys.path: the script's own folder)
    picture_cli.main(make, __doc__)
