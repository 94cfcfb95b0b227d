"""DIR/audit.html: the audit as one page that opens offline and alone (no script, no other
file; inline styles), so `vidbench view` can copy it into a report as it is. Every text from
the runs and the data is HTML-escaped; the flag filter is radio buttons and CSS."""

from __future__ import annotations

from html import escape
from typing import Any

from vidbench.core.audit_flags import FLAG_KINDS

MEANING = {
    "gold": "the gold is likely wrong: the models strong on the rest agree on another option",
    "blind": "answered right by blind runs (no video) well beyond chance",
    "chance": "no better than chance over the models: it tells them apart no better than a coin",
    "easy": "every model right: it tells none apart",
    "negative": "right answers come from the weaker models",
    "duplicate": "a near duplicate of another item (question and options)",
}

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:78em;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}
td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.flag{display:inline-block;border-radius:3px;padding:0 .4em;margin:0 .3em .2em 0;color:#fff;
font-size:.85em}
.gold{background:#b3261e}.blind{background:#6a3ea1}.chance{background:#777}.easy{background:#2e7d32}
.negative{background:#c25e00}.duplicate{background:#1565c0}.bad{color:#b3261e;font-weight:600}
.text{white-space:pre-wrap;color:#444;font-size:.9em;max-width:40em}
.filters label{margin-right:1em;cursor:pointer}.filters input{margin-right:.3em}
.reviewed{opacity:.55}
""" + "".join(
    f"#k-{k}:checked~table tbody tr:not(.k-{k}){{display:none}}" for k in (*FLAG_KINDS, "reviewed")
)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _p(value: float) -> str:
    return f"{value:.2g}"


def _models(models: list[dict[str, Any]]) -> str:
    rows = []
    for m in models:
        bias = m["position_bias"] or {}
        shown = (
            f"{escape(bias['favoured'])} {_pct(bias['shares'][bias['favoured']])}% "
            f"(golds {_pct(bias['gold_shares'][bias['favoured']])}%), p = {_p(bias['p_value'])}"
            if bias
            else "—"
        )
        cell = f'<td class="bad">{shown}</td>' if bias.get("biased") else f"<td>{shown}</td>"
        ci = m["ci95"]
        interval = f"[{_pct(ci[0])}, {_pct(ci[1])}]" if ci else "—"
        rows.append(
            f"<tr><td>{escape(m['model'])}</td><td>{'blind' if m['blind'] else ''}</td>"
            f'<td class="n">{m["n"]}</td><td class="n">{_pct(m["accuracy"])}</td>'
            f'<td class="n">{interval}</td><td class="n">{_num(m["ability"])}</td>{cell}</tr>'
        )
    head = (
        "<tr><th>Model</th><th></th><th>Items</th><th>Accuracy %</th><th>95% interval</th>"
        "<th>Ability</th><th>Letter most favoured (p)</th></tr>"
    )
    return f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def _summary(summary: dict[str, Any]) -> str:
    lines = [
        f"<li>{summary['items']} items, {summary['models']} model run(s), "
        f"{summary['blind_models']} blind run(s); {summary['flagged_items']} items flagged"
        + _reviewed(summary)
        + "</li>"
    ]
    gold = summary["position_bias"]["gold"]
    if gold:
        shares = ", ".join(f"{escape(k)} {_pct(v)}%" for k, v in gold["shares"].items())
        verdict = '<span class="bad">uneven</span>' if gold["biased"] else "even"
        lines.append(f"<li>Gold letters: {shares} ({verdict}, p = {_p(gold['p_value'])})</li>")
    size = summary["sizing"]
    if size:
        ci = size["ci95"]
        lines.append(
            f"<li>At {size['n']} items and {_pct(size['accuracy'])}% accuracy a score's 95% "
            f"interval is [{_pct(ci[0])}, {_pct(ci[1])}]; McNemar's test detects, with 80% "
            f"power, a difference of {_pct(size['detectable_observed'])} points between two of "
            f"these models (they disagree on {_pct(size['discordance_observed'])}% of items), "
            f"{_pct(size['detectable'])} between models with independent errors</li>"
        )
    fitted = summary["item_model"]
    lines.append(
        f"<li>Item response model: {escape(fitted['model'])} fitted by "
        f"{escape(fitted['library'])}{'' if fitted['fitted'] else ' (not fitted)'}</li>"
    )
    lines += [f"<li>{escape(note)}</li>" for note in summary["notes"]]
    return f"<ul>{''.join(lines)}</ul>"


def _reviewed(summary: dict[str, Any]) -> str:
    """The summary line's "; N reviewed and kept", when people kept items after a review."""
    n = _kept(summary)
    return f"; {n} reviewed and kept (the flags they were kept with are not counted)" if n else ""


def _flag(flag: dict[str, Any]) -> str:
    kept = " (reviewed: kept)" if flag.get("reviewed") else ""
    css = " reviewed" if kept else ""
    return (
        f'<span class="flag {flag["kind"]}{css}">{flag["kind"]}</span>'
        f'<span class="{css.strip()}">{escape(flag["reason"])}{kept}</span>'
    )


def _items(
    items: list[dict[str, Any]], texts: dict[str, str], counts: dict[str, int], kept: int
) -> str:
    filters = ['<input type="radio" name="kind" id="k-all" checked><label for="k-all">all</label>']
    for kind in FLAG_KINDS:
        filters.append(
            f'<input type="radio" name="kind" id="k-{kind}"><label for="k-{kind}">'
            f'<span class="flag {kind}">{kind}</span> {counts[kind]}</label>'
        )
    if kept:
        filters.append(
            '<input type="radio" name="kind" id="k-reviewed"><label for="k-reviewed">'
            f"reviewed and kept {kept}</label>"
        )
    rows = []
    for item in items:
        if not item["flags"]:
            continue
        classes = [f"k-{f['kind']}" for f in item["flags"] if not f.get("reviewed")]
        classes += ["k-reviewed"] if any(f.get("reviewed") for f in item["flags"]) else []
        kinds = " ".join(dict.fromkeys(classes))
        flags = "<br>".join(_flag(f) for f in item["flags"])
        suggested = next((f["suggested"] for f in item["flags"] if f["suggested"]), None)
        rows.append(
            f'<tr class="{kinds}"><td>{escape(item["id"])}</td>'
            f'<td class="text">{escape(texts.get(item["id"], ""))}</td>'
            f"<td>{escape(item['gold'] or '—')}</td><td>{escape(suggested or '')}</td>"
            f'<td class="n">{_num(item["difficulty"])}</td>'
            f'<td class="n">{_num(item["discrimination"])}</td><td>{flags}</td></tr>'
        )
    head = (
        "<tr><th>Item</th><th>Question</th><th>Gold</th><th>Suggested</th><th>Difficulty</th>"
        "<th>Discrimination</th><th>Flags</th></tr>"
    )
    return (
        f'<div class="filters">{"".join(filters)}'
        f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _kept(summary: dict[str, Any]) -> int:
    return int(summary.get("reviewed", {}).get("items", 0))


def render(document: dict[str, Any], texts: dict[str, str]) -> str:
    summary = document["summary"]
    meaning = "".join(
        f'<li><span class="flag {k}">{k}</span>{escape(v)}</li>' for k, v in MEANING.items()
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Audit: {escape(summary['task'])}</title><style>{STYLE}</style></head><body>"
        f"<h1>Audit: {escape(summary['task'])}</h1>{_summary(summary)}"
        f"<h2>Models</h2>{_models(document['models'])}"
        f"<h2>Flagged items</h2><ul>{meaning}</ul>"
        f"{_items(document['items'], texts, summary['flags'], _kept(summary))}</body></html>\n"
    )
