"""The shop's function tools and its restocking workflow."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from toolfoundry import tool
from toolfoundry.spec import StepResult, StepStatus
from toolfoundry.workflow import workflow

PRICES = {"apple": 0.5, "pear": 0.75}


@tool
def price(item: str, currency: Literal["EUR", "USD"] = "EUR", quantity: int = 1) -> dict:
    """Price of an item in the shop.

    Args:
        item: the item's name.
        currency: the currency of the price.
        quantity: how many items.
    """
    if item not in PRICES:
        raise KeyError(f"no such item: {item}")
    rate = 1.0 if currency == "EUR" else 1.1
    return {"item": item, "total": round(PRICES[item] * quantity * rate, 2), "currency": currency}


@dataclass
class Restock:
    item: str
    amount: int
    ordered: list[str] = field(default_factory=list)


@workflow
def restock(item: str, amount: int = 10) -> Restock:
    """Order more of an item from the supplier.

    Args:
        item: the item to order.
        amount: how many to order.
    """
    return Restock(item, amount)


@restock.step
def order(state: Restock) -> StepResult:
    state.ordered.append(f"{state.amount} x {state.item}")
    return StepResult(StepStatus.COMPLETED, data={"ordered": state.amount})
