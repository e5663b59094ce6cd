"""The package's layers point one way (docs/architecture.md): every import, module level or inside a function, goes
from a module to one in its own layer or a lower one, and no import circle exists. Parsed with `ast`, so an import
placed inside a function to dodge a circle counts like any other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "dlm_bench"

# top to bottom; a module's layer is that of its longest listed prefix
LAYERS = [
    ("entry point", ["cli"]),
    ("sweeps and reports", ["sweeps", "report"]),
    ("run harness", ["run"]),
    ("validation and registries", ["registry"]),
    ("papers", ["lgm", "sggpm", "savigp"]),
    ("model families", ["models", "objectives", "estimators", "training"]),
    ("shared GP maths", ["gpmath", "likelihoods", "pac"]),
    ("leaves", ["data", "results", "config", "util", "errors", "__init__", "conf", "shipped_data", "papers"]),
]
# The paper packages, none of which may import another. The DLM and PAC-GP papers run on the GPyTorch SVGP family
# (models/ with objectives/, estimators/, training/: one family, one package group); pac/ holds PAC-Bayes maths (bounds,
# KL terms, losses) that the family calls, so it sits below it with gpmath/ and likelihoods/.
PAPERS = ("lgm", "sggpm", "savigp")

def module_name(path: Path) -> str:
    rel = path.relative_to(PKG).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(mod: str) -> int:
    best, depth = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > depth:
                best, depth = i, len(p)
    assert best is not None, f"dlm_bench.{mod} is in no layer: add it to LAYERS (and docs/architecture.md)"
    return best


def imports() -> dict[str, set[str]]:
    """module -> the dlm_bench modules it imports (relative and absolute, anywhere in the file)."""
    mods = {module_name(p): p for p in PKG.rglob("*.py")}
    edges = {}
    for mod, path in mods.items():
        pkg = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        out = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg[: len(pkg) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif node.module and node.module.startswith("dlm_bench"):
                    target = node.module[len("dlm_bench."):] if node.module != "dlm_bench" else ""
                else:
                    continue
                for alias in node.names:  # `from . import x` may import the module x
                    sub = f"{target}.{alias.name}" if target else alias.name
                    out.add(sub if sub in mods else target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("dlm_bench."):
                        out.add(alias.name[len("dlm_bench."):])
        edges[mod] = {t for t in out if t and t in mods and t != mod}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_dlm_bench():
    found = cycles(imports())
    print(f"{len(found)} import cycle(s) in dlm_bench (imports inside functions included)")
    assert found == [], found


def test_imports_point_down_the_layers():
    up = [f"dlm_bench.{a} ({LAYERS[layer_of(a)][0]}) imports dlm_bench.{b} ({LAYERS[layer_of(b)][0]})"
          for a, targets in imports().items() for b in targets if layer_of(b) < layer_of(a)]
    assert up == [], "\n".join(up)


def paper_to_paper(edges: dict[str, set[str]]) -> list[str]:
    """Imports from one paper package into another."""
    top = lambda m: m.split(".")[0]  # noqa: E731
    return sorted(f"dlm_bench.{a} imports dlm_bench.{b}" for a, targets in edges.items() for b in targets
                  if top(a) in PAPERS and top(b) in PAPERS and top(a) != top(b))


def test_the_paper_import_finder_finds_a_planted_one():
    assert paper_to_paper({"sggpm.model": {"lgm.optim", "gpmath.lgm"}, "lgm.optim": {"gpmath.lgm"}}) == [
        "dlm_bench.sggpm.model imports dlm_bench.lgm.optim"]
    assert paper_to_paper({"sggpm.model": {"sggpm.optim", "models.components"}}) == []


def test_papers_never_import_each_other():
    edges = imports()
    found = paper_to_paper(edges)
    print("layers, top to bottom: " + " -> ".join(f"{name} [{', '.join(p)}]" for name, p in LAYERS))
    print(f"{len(found)} paper -> paper import(s) among {', '.join(PAPERS)}")
    assert found == [], "\n".join(found)


# Everything a model family is made of: the families, the papers on them and the GP maths below them. The run harness
# reaches a family only through the registry (ModelSpec and its hooks: execute, task_defaults, name_defaults,
# beta_group), so it runs one path for every family (issue 72).
FAMILY_PACKAGES = ("models", "training", "objectives", "estimators", "likelihoods", "pac", "lgm", "sggpm", "savigp",
                   "gpmath")
# what the harness does not import either: the families' model libraries, and Hydra (a sweep job reads its Hydra job,
# sweeps/compose.py, and passes the overrides and beta indices in)
NOT_IN_HARNESS = ("gpytorch", "linear_operator", "hydra")


def run_into_families(edges: dict[str, set[str]]) -> list[str]:
    """Imports from run/ into a model family package (FAMILY_PACKAGES)."""
    return sorted(f"dlm_bench.{a} imports dlm_bench.{b}" for a, targets in edges.items() if a.split(".")[0] == "run"
                  for b in targets if b.split(".")[0] in FAMILY_PACKAGES)


def library_imports(source: str) -> set[str]:
    """The NOT_IN_HARNESS libraries a module's source imports (anywhere in the file)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        out |= {n.split(".")[0] for n in names if n.split(".")[0] in NOT_IN_HARNESS}
    return out


def test_the_run_import_finders_find_planted_ones():
    assert run_into_families({"run.batched": {"models.batched_svgp", "registry.models"}, "models.x": {"lgm.y"}}) == [
        "dlm_bench.run.batched imports dlm_bench.models.batched_svgp"]
    assert run_into_families({"run.naming": {"registry.models", "config.schema", "util.rng"}}) == []
    assert library_imports("def f():\n    from gpytorch.kernels import RBFKernel\nimport torch") == {"gpytorch"}
    assert library_imports("import linear_operator.utils as u\nfrom .gpytorch import x") == {"linear_operator"}


def test_the_run_harness_imports_no_model_family_no_gpytorch_and_no_hydra():
    found = run_into_families(imports())
    libraries = sorted(f"dlm_bench/run/{p.name} imports {lib}" for p in (PKG / "run").rglob("*.py")
                       for lib in library_imports(p.read_text()))
    print(f"{len(found)} imports from run/ into a model family ({', '.join(FAMILY_PACKAGES)}); "
          f"{len(libraries)} of {', '.join(NOT_IN_HARNESS)}")
    assert found == [] and libraries == [], "\n".join(found + libraries)


def test_a_paper_package_imports_nothing_from_the_harness_or_sweeps():
    families = ("models", "lgm", "sggpm", "savigp", "pac", "objectives", "estimators", "likelihoods", "gpmath",
                "training")
    bad = [(a, b) for a, targets in imports().items() if a.split(".")[0] in families for b in targets
           if b.split(".")[0] in ("run", "sweeps", "report", "cli", "registry")]
    assert bad == []


# Hydra at the edge (issue 72): composition, the override grammar and Hydra's error wording in sweeps/compose.py, the
# multirun in sweeps/hydra_app.py; everything below gets what it needs from Hydra passed in.
HYDRA_AT_THE_EDGE = {"sweeps.compose", "sweeps.hydra_app"}



def hydra_importers(sources: dict[str, str]) -> set[str]:
    """The modules (name -> source) that import hydra anywhere in the file, inside functions too."""
    found = set()
    for mod, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n == "hydra" or n.startswith("hydra.") for n in names):
                found.add(mod)
    return found


def test_the_hydra_import_finder_finds_a_planted_one():
    planted = {"a": "def f():\n    from hydra.core.hydra_config import HydraConfig\n",
               "b": "import hydra\n", "c": "from omegaconf import OmegaConf  # hydra in a comment\n",
               "d": "from .hydra_app import main_hydra\n"}
    assert hydra_importers(planted) == {"a", "b"}


def test_only_the_edge_imports_hydra():
    found = hydra_importers({module_name(p): p.read_text() for p in PKG.rglob("*.py")})
    print(f"modules importing hydra: {', '.join(sorted(found))}")
    assert found == HYDRA_AT_THE_EDGE
    assert len(found) <= 3


def test_report_does_not_import_torch():
    out = subprocess.run([sys.executable, "-c", "import dlm_bench.report, sys; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_label_sets_come_from_the_declarations_and_keep_the_old_records_labels():
    """results/labels.py reads the papers' declarations (no hand-written list of models); the models whose old
    records (no `method` field) were labelled by the sets it used to hard-code keep those labels."""
    from dlm_bench.registry.models import MODELS
    from dlm_bench.results import labels

    assert labels.collapsed_models() == {n for n, s in MODELS.items() if s.collapsed} == {"sgpr", "fitc"}
    assert labels.own_loop_models() == {n for n, s in MODELS.items() if s.own_loop} == {
        "lgm_glm", "lgm_gp", "lgm_sparse", "savigp", "sggpm"}
    old = [({"model": "lgm_gp", "objective": "fpb"}, "lgm_gp-fpb"), ({"model": "sggpm", "objective": "fp_sod"},
           "sggpm-fp_sod"), ({"model": "fitc", "objective": "fitc"}, "fitc"),
           ({"model": "svgp", "objective": "dlm", "hyperparameters": "fixed", "estimator": "bmc"}, "svgp-dlm-fixed-bmc")]
    assert [labels.record_method(rec) for rec, _ in old] == [label for _, label in old]


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph folded onto top-level packages (a root module is its own node)."""
    top = lambda m: m.split(".")[0]  # noqa: E731
    out: dict[str, set[str]] = {}
    for a, targets in edges.items():
        out.setdefault(top(a), set()).update(top(b) for b in targets if top(b) != top(a))
    return out


def test_package_folding_finds_a_planted_package_cycle():
    edges = {"a.x": {"b.y"}, "b.y": set(), "b.z": {"a.w"}, "a.w": set()}
    assert cycles(package_edges(edges)) == [["a", "b"]]


def test_no_import_cycle_between_packages():
    found = cycles(package_edges(imports()))
    print(f"{len(found)} import cycle(s) between dlm_bench packages")
    assert found == [], found


def test_root_holds_few_modules():
    """The root keeps the entry point and the error types; everything else lives in a package named for its layer."""
    root = sorted(p.name for p in PKG.glob("*.py"))
    assert root == ["__init__.py", "cli.py", "errors.py"], root


def private_imports(root: Path, source: str, package: str | None) -> list[str]:
    """`from X import _name` (or `from X._mod import ...`) where X is a dlm_bench package other than the importer's
    own top-level package; package: the importer's package ("" at the root), None outside dlm_bench (scripts)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            parts = [p for p in (package or "").split(".") if p]
            target = parts[: len(parts) - node.level + 1] + (node.module.split(".") if node.module else [])
        elif node.module and node.module.split(".")[0] == "dlm_bench":
            target = node.module.split(".")[1:]
        else:
            continue
        own = (package or "").split(".")[0]
        if target and target[0] == own:
            continue
        for alias in node.names:
            names = target + [alias.name]
            if any(n.startswith("_") and not n.startswith("__") for n in names):
                out.append(f"{root}: {'.' * node.level}{node.module or ''} import {alias.name}")
    return out


def test_private_import_finder_finds_a_planted_one():
    assert private_imports(Path("a.py"), "from ..lgm.optim import _step", "sggpm")
    assert private_imports(Path("s.py"), "from dlm_bench.lgm.optim import _step", None)
    assert not private_imports(Path("a.py"), "from .optim import _step", "lgm")
    assert not private_imports(Path("a.py"), "from ..lgm.optim import step", "sggpm")


def test_no_private_import_across_packages():
    """A name with a leading underscore is its package's own; another package (or a script) that needs it gets a
    public function (issue 56: sggpm used lgm.optim._newton_step)."""
    found = []
    for path in PKG.rglob("*.py"):
        mod = module_name(path)
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        found += private_imports(path, path.read_text(), "" if mod == "__init__" else pkg)
    for path in (PKG.parent / "scripts").rglob("*.py"):
        found += private_imports(path, path.read_text(), None)
    assert found == [], "\n".join(found)
