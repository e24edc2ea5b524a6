"""forge/README.md's table of modules names every module of the package (it once missed
pycheck.py)."""

from pathlib import Path

import toolfoundry.forge

FORGE = Path(toolfoundry.forge.__file__).parent


def test_readme_names_every_forge_module() -> None:
    readme = (FORGE / "README.md").read_text(encoding="utf-8")
    modules = sorted(p.name for p in FORGE.glob("*.py") if p.name != "__init__.py")
    assert len(modules) > 10
    missing = [name for name in modules if f"`{name}`" not in readme]
    assert missing == [], f"forge/README.md does not describe {missing}"
