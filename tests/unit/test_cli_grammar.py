"""Hydra's grammar on dlm-bench's command line: flags and overrides in any order (issue 75), parsed without running
anything, and override values read as Hydra reads them."""

from __future__ import annotations

import pytest

from dlm_bench.cli import build_parser, parse_intermixed
from dlm_bench.sweeps.compose import plain_value

# (argv, the command's list in order, flags that must be set): flags before, between and after the words
ORDERS = [
    (["run", "seed=3", "trainer.max_iters=3"], ["seed=3", "trainer.max_iters=3"], {}),
    (["run", "--cfg", "job", "seed=3", "trainer.max_iters=3"], ["seed=3", "trainer.max_iters=3"], {"cfg": "job"}),
    (["run", "seed=3", "--cfg", "job", "trainer.max_iters=3"], ["seed=3", "trainer.max_iters=3"], {"cfg": "job"}),
    (["run", "seed=3", "trainer.max_iters=3", "--cfg", "job"], ["seed=3", "trainer.max_iters=3"], {"cfg": "job"}),
    (["run", "seed=3", "-m", "trainer.max_iters=3", "--cfg=hydra", "a=1"], ["seed=3", "trainer.max_iters=3", "a=1"],
     {"multirun": True, "cfg": "hydra"}),
    (["sweep", "--dry-run", "experiment=dlm_fig1c", "results_dir=out"], ["experiment=dlm_fig1c", "results_dir=out"],
     {"dry_run": True}),
    (["sweep", "experiment=dlm_fig1c", "--dry-run", "results_dir=out"], ["experiment=dlm_fig1c", "results_dir=out"],
     {"dry_run": True}),
    (["sweep", "experiment=dlm_fig1c", "results_dir=out", "--dry-run"], ["experiment=dlm_fig1c", "results_dir=out"],
     {"dry_run": True}),
    (["sweep", "seed=0,1", "--force", "model=sgpr", "--time-limit", "-5m", "objective=elbo", "--retry-failed"],
     ["seed=0,1", "model=sgpr", "objective=elbo"], {"force": True, "retry_failed": True, "time_limit": "-5m"}),
    (["sweep", "--estimate", "a=1", "--time-limit", "2h", "b=2"], ["a=1", "b=2"], {"estimate": True, "time_limit": "2h"}),
    (["report", "--paper", "dlm", "r1", "r2"], ["r1", "r2"], {"paper": "dlm"}),
    (["report", "r1", "--paper", "dlm", "r2", "--out", "o", "r3"], ["r1", "r2", "r3"], {"paper": "dlm", "out": "o"}),
    (["report", "r1", "r2", "--out", "o"], ["r1", "r2"], {"out": "o"}),
    (["fetch", "pol", "--force", "boston"], ["pol", "boston"], {"force": True}),
]


@pytest.mark.parametrize("argv,words,flags", ORDERS, ids=[" ".join(a) for a, _, _ in ORDERS])
def test_flags_and_overrides_in_any_order(argv, words, flags):
    from dlm_bench.cli import glue_option_values

    args = parse_intermixed(build_parser(), glue_option_values(argv))
    field = "dirs" if argv[0] == "report" else "names" if argv[0] == "fetch" else "overrides"
    assert getattr(args, field) == words
    for key, value in flags.items():
        assert getattr(args, key) == value, key


@pytest.mark.parametrize("argv", [["sweep", "a=1", "--nope", "b=2"], ["run", "seed=1", "--dry-run"],
                                  ["datasets", "extra"], ["experiments", "--force"]])
def test_an_unknown_flag_or_word_is_still_argparse_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        parse_intermixed(build_parser(), argv)
    assert exc.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


@pytest.mark.parametrize("override,value", [
    ('results_dir="DIR"', "DIR"),  # Hydra's documented quoting: the quotes are not part of the folder's name
    ("results_dir='DIR'", "DIR"),
    ("results_dir='a b'", "a b"),
    ("results_dir='it\\'s'", "it's"),
    ("results_dir=/tmp/out", "/tmp/out"),
    ("results_dir=null", "null"),  # not a string: left as written, for the empty/null check that follows
    ("results_dir=", ""),
    ("results_dir=123", "123"),
])
def test_plain_value_reads_quotes_as_hydra_does(override, value):
    assert plain_value(override) == value
