"""Markdown: number formats, tables, and the splice between the report's markers."""
import pathlib

BEGIN, END = "<!-- sim:begin -->", "<!-- sim:end -->"
QUANTILES = ["p50", "p99", "p99.9", "p99.99", "p99.999"]


def us(ns):
    v = ns / 1e3
    if v < 10:
        return f"{v:.2f}"
    if v < 1000:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def count(v):
    if v >= 1e9:
        return f"{v / 1e9:.2f}G"
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e4:
        return f"{v / 1e3:.1f}k"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.2f}"


def quant(lat, name):
    """A quantile in us, marked * when fewer than 100 completions lie beyond it."""
    if lat["count"] == 0:
        return "-"
    q = lat["quantiles"][name]
    return us(q["ns"]) + ("" if q["significant"] else "\\*")


def pct(new, old):
    if old == 0:
        return "-"
    return f"{100 * (new - old) / old:+.1f} %"


def convergence(ns):
    if ns is None:
        return "-"
    if ns < 0:
        return "never"
    return f"{ns / 1e6:.0f}"


def md_table(head, rows, align=None):
    align = align or ["l"] + ["r"] * (len(head) - 1)
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def reproduce(runs):
    out = ["", "<details><summary>commands</summary>", "", "```sh"]
    out += [r.cmd for r in runs]
    out += ["```", "", "</details>", ""]
    return out


def replace_section(markdown, lines):
    """Replaces what lies between BEGIN and END (the markers included) with `lines`; the rest of
    the file is left alone, and the section is appended when the markers are missing."""
    path = pathlib.Path(markdown)
    text = path.read_text() if path.exists() else ""
    section = "\n".join(lines)
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + section + tail
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section + "\n"
    path.write_text(text)
