"""The variant proofs' table for ``agentworld tasks prove --variants``: one row per task, one column per variant.

A cell is ``ok`` (proven: the idle team fails, the adapted reference plan passes), ``n/a`` (the variant does
not apply; the reason is listed under the table) or ``FAIL`` (listed with what failed).
"""

from __future__ import annotations

from typing import Any

SHORT = {"no_communication": "no\ncomm", "oracle_communication": "oracle\ncomm", "single_agent": "single\nagent",
         "shared_plan": "shared\nplan", "shared_plan_no_communication": "plan,\nno comm", "no_roles": "no\nroles",
         "short_horizon": "short\nhorizon", "random_spawn": "random\nspawn", "no_documentation": "no\ndocs",
         "party_status": "party\nstatus"}


def variant_cells(tasks: list[Any], names: tuple[str, ...] = ()) -> list[Any]:
    from ..runs.prove_variants import prove_variants
    from ..tasks.variants import PROVEN_VARIANTS, get_variant

    try:
        chosen = [get_variant(n).label for n in names] if names else list(PROVEN_VARIANTS)
    except ValueError as e:
        import click

        raise click.BadParameter(str(e), param_hint="--variant") from None
    return prove_variants(tasks, chosen)


def print_variant_cells(cells: list[Any], console: Any, verbose: bool = False) -> None:
    from rich.table import Table

    variants = list(dict.fromkeys(c.variant for c in cells))
    tasks = list(dict.fromkeys(c.task_id for c in cells))
    by = {(c.task_id, c.variant): c for c in cells}
    mark = {"proven": "[green]ok[/green]", "n/a": "[yellow]n/a[/yellow]", "failed": "[red]FAIL[/red]"}
    table = Table(title=f"variant proofs ({len(tasks)} tasks x {len(variants)} variants)")
    table.add_column("task", no_wrap=True)
    for v in variants:
        table.add_column(SHORT.get(v.partition(":")[0], v), justify="center")
    for t in tasks:
        table.add_row(t, *(mark[by[(t, v)].status] for v in variants))
    console.print(table)
    for c in cells:
        if c.status != "proven" or verbose:
            console.print(f"{c.task_id} {c.variant}: {mark[c.status]} {c.detail}", highlight=False, soft_wrap=True)
    counts = {s: sum(c.status == s for c in cells) for s in ("proven", "n/a", "failed")}
    console.print(f"{counts['proven']} (task, variant) cells proven, {counts['n/a']} n/a with a reason, "
                  f"{counts['failed']} failed ({sum(c.seconds for c in cells):.1f} s)")
