"""A script outside the package, named by its file in toolfoundry.toml."""

from toolfoundry import tool


@tool
def report(period: str = "week") -> str:
    """Summarise the shop's sales over a period.

    Args:
        period: day, week or month.
    """
    return f"sales report for the {period}"
