"""The seed article's hand-drawn pictures, generated from a real run of its network.

For the first training step (image x1) of each example this writes
  * ``<example>_graph.png`` — the computation graph after the first backward pass, with values,
    gradients and the max-pool argmax cells (the article's "blue circles");
  * ``<example>_backprop.png`` — the article's derivation as matrices: the argmax mask, the 2×2
    upstream gradient expanded to 4×4 and routed through the mask, and the kernel gradient as the
    input convolved with that routed gradient, rotated by 180°.

Run:  python examples/article_pictures.py [DIR]     (default: docs/images)
"""
from __future__ import annotations

import html
import sys
from pathlib import Path

import graphviz
import numpy as np

from tinygrad_pool.viz import save_graph

sys.path.insert(0, str(Path(__file__).resolve().parent))
import article_network as article  # noqa: E402

ARGMAX_COLOUR, TIE_COLOUR = "#9ecae1", "#c6dbef"


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


def matrix_label(title: str, matrix, highlight=None, note: str = "") -> str:
    """A Graphviz HTML label: a title row and the matrix, highlighted cells shaded."""
    matrix = np.atleast_2d(np.squeeze(np.asarray(matrix)))
    rows = [f'<TR><TD COLSPAN="{matrix.shape[1]}" BORDER="0"><B>{html.escape(title)}</B></TD></TR>']
    for r, row in enumerate(matrix):
        cells = []
        for c, value in enumerate(row):
            colour = highlight[r, c] if highlight is not None and highlight[r, c] else "white"
            cells.append(f'<TD BGCOLOR="{colour}">{round(float(value), 3) + 0.0:.3f}</TD>')  # + 0.0: no "-0.000"
        rows.append("<TR>" + "".join(cells) + "</TR>")
    if note:
        rows.append(f'<TR><TD COLSPAN="{matrix.shape[1]}" BORDER="0">'
                    f'<FONT POINT-SIZE="10">{html.escape(note)}</FONT></TD></TR>')
    return '<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4">' + "".join(rows) + "</TABLE>>"


def backprop_picture(example: article.Example, step: dict) -> graphviz.Digraph:
    """The article's max-pool backward pass, drawn with the numbers of the real first step."""
    layers, net = step["layers"], step["net"]
    pool_input = layers.get("L1A", layers["L1"])
    pool_node = layers["L1Max"].grad_fn
    argmax = np.zeros(16, dtype=bool)
    argmax[pool_node.argmax.ravel()] = True
    argmax = argmax.reshape(4, 4)
    expanded = layers["L1Max"].grad.data[0, 0].repeat(2, axis=0).repeat(2, axis=1)
    mask = (pool_input.data[0, 0] == layers["L1Max"].data[0, 0].repeat(2, 0).repeat(2, 1))
    shade = np.where(argmax, ARGMAX_COLOUR, np.where(mask, TIE_COLOUR, ""))

    g = graphviz.Digraph(f"{example.title} backprop", graph_attr={
        "rankdir": "TB", "nodesep": "0.4", "label": f"{example.title}: the max-pool backward pass of the first step "
        f"(image x1), ties='{pool_node.attrs['ties']}'", "labelloc": "t", "fontsize": "18"},
        node_attr={"shape": "plaintext", "fontname": "Helvetica"})
    pool_name = "ReLU(L1)" if example.activation else "L1"
    g.node("x", matrix_label("x (input)", layers["x"].data))
    g.node("L1", matrix_label(f"{pool_name}, maxima shaded", pool_input.data, shade,
                              "dark: stored argmax; light: tied maximum"))
    g.node("pooled", matrix_label("L1Max = max-pool 2×2", layers["L1Max"].data))
    g.node("upstream", matrix_label("∂cost/∂L1Max", layers["L1Max"].grad.data))
    g.node("expanded", matrix_label("expanded to 4×4", expanded))
    g.node("mask", matrix_label("mask (L1 == repeat(L1Max))", mask.astype(float), shade))
    g.node("routed", matrix_label(f"∂cost/∂{pool_name} = mask × expanded",
                                  pool_input.grad.data, shade))
    kernel_note = "= rot180(x ∗ rot180(∂cost/∂L1))"
    if example.activation:
        g.node("relu", matrix_label("∂cost/∂L1 = ∂cost/∂ReLU(L1) × [L1 > 0]", layers["L1"].grad.data))
    g.node("dW1", matrix_label("∂cost/∂W1", net.w1.grad.data, note=kernel_note))
    # Forward runs along the top row; the backward pass along the bottom row, from the upstream
    # gradient ∂cost/∂L1Max to the kernel gradient ∂cost/∂W1.
    g.edge("x", "L1", label="conv 3×3 (with W1)")
    g.edge("L1", "pooled", label="max of each window")
    g.edge("pooled", "upstream", label="backward", style="dashed")
    g.edge("L1", "mask", label="where is the max?", style="dashed")
    g.edge("upstream", "expanded", label="repeat 2×2")
    g.edge("expanded", "routed", label="×")
    g.edge("mask", "routed", label="×")
    last = "routed"
    if example.activation:
        g.edge("routed", "relu", label="× ReLU'")
        last = "relu"
    g.edge(last, "dW1", label="valid conv with x")
    g.edge("x", "dW1", style="dashed")
    for row in (["x", "L1", "pooled"], ["dW1", "relu", "routed", "mask", "expanded", "upstream"]):
        with g.subgraph() as same_rank:
            same_rank.attr(rank="same")
            for name in row:
                if name != "relu" or example.activation:
                    same_rank.node(name)
    return g


def write_pictures(out_dir: Path) -> list:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for key, example in (("example1", article.EXAMPLE_1), ("example2", article.EXAMPLE_2)):
        step = first_step(example)
        written.append(save_graph(step["cost"], out_dir / f"{key}_graph.png",
                                  show_values=True, show_saved=True))
        picture = backprop_picture(example, step)
        path = out_dir / f"{key}_backprop.png"
        picture.render(outfile=str(path), format="png", cleanup=True)
        written.append(path)
    return [Path(p) for p in written]


if __name__ == "__main__":
    for written_path in write_pictures(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/images")):
        print(f"wrote {written_path}")
