"""The peers bench's table (one line per model, tool and mode) and its section of
tests/bench/README.md, between the two marker lines, replaced whole on each full run."""

import re

import judge

BEGIN, END = "<!-- peers table: begin -->", "<!-- peers table: end -->"
HEADER = ["model", "tool", "mode", "npucc target", "time", "peak RSS", "nodes low/f32", "cosine",
          "max abs err", "task (held out)", "bench's own emulation", "ORT plain run", "ORT loads"]


def cosine_text(figures):
    if figures.get("no_cosine"):
        return "n/a (< 8 elements)"
    if figures["cosine"] is None:
        return f"undefined ({figures['nonfinite']} non-finite)" if figures["nonfinite"] else "undefined"
    return f"{figures['cosine']:.7f}"


def task_text(figures):
    if not figures["task"]:
        return "-"
    kind, value = figures["task"]
    return f"{kind} {'undefined' if value is None else f'{value:.3f}'}"


def close(a, b, tolerance):
    """Both undefined, or both defined and within `tolerance`: the plain run agrees."""
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= tolerance)


def plain_text(plain, emulated):
    """ORT's plain run of the graph, and where it disagrees with the emulation."""
    if "error" in plain:
        return "fails: " + plain["error"][:60]
    text = cosine_text(plain)
    hidden = emulated["nonfinite"] - plain["nonfinite"]
    if hidden > 0:
        return f"{text}: hides {hidden} non-finite"
    if not close(plain["cosine"], emulated["cosine"], 1e-3) or not close(
            (plain["task"] or (0, None))[1], (emulated["task"] or (0, None))[1], 0.01):
        return f"{text}: disagrees ({task_text(plain)})"
    return f"{text}: agrees"


def max_abs_text(figures):
    if figures["max_abs"] is None:
        return "undefined"
    return "inf" if figures["max_abs"] == float("inf") else f"{figures['max_abs']:.3g}"


def cross_check_text(judged):
    """The bench's own emulation against npucc compare's: agrees (judge.agrees), or both
    figures; when compare refused the graph, its reason (the row is then judged by the
    bench's own emulation)."""
    own = judged["emulated"]
    if "error" in judged["npucc"]:
        return "compare refuses it (figures: this one's): " + judged["npucc"]["error"][:70]
    if judged["agrees"]:
        return "agrees"
    return f"DISAGREES: {cosine_text(own)}, {max_abs_text(own)}"


def cells(row):
    base = [row["model"], row["tool"], row["mode"], row.get("target", "")]
    if row["problem"]:
        return base + ["-"] * (len(HEADER) - len(base) - 1) + [row["problem"]]
    j = row["judged"]
    figures = judge.verdict(j)
    return base + [f"{row['seconds']:.2f} s", f"{row['rss'] / (1 << 20):.0f} MiB", "%d/%d" % tuple(j["nodes"]),
                   cosine_text(figures), max_abs_text(figures), task_text(figures), cross_check_text(j),
                   plain_text(j["plain"], figures), j["loads"]]


def render(rows):
    lines = [cells(r) for r in rows]
    widths = [max(len(str(line[i])) for line in [HEADER] + lines) for i in range(len(HEADER))]

    def fmt(line):
        return "  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip()
    return "\n".join([fmt(HEADER), fmt(["-" * w for w in widths])] + [fmt(line) for line in lines])


def readme_section(readme, table, versions, seconds, date):
    section = "\n".join([
        BEGIN,
        f"`tests/bench/peers/run`, {date}, {seconds / 60:.0f} min, one run on the 2-core development machine.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".",
        "",
        "```",
        table,
        "```",
        END])
    text = readme.read_text()
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n## Side by side with the peers (issue 45)\n\n" + section + "\n"
    readme.write_text(text)
