"""newuser42 n4: a script definition's parameters are checked against the options its text declares, as the
notebook case is against its parameters cell (in-process: the reading rule; the end-to-end check is in
test_definitions_cli.py, on that module's server)."""

from __future__ import annotations

from jupyter_sched.definitions.script_options import (
    declared_options,
    script_note,
    script_parameters_note,
    unknown_option_hint,
)

ARGPARSE = '''import argparse
p = argparse.ArgumentParser()
p.add_argument("--fail", default="no")
p.add_argument('-e', '--epochs', type=int)
p.add_argument("path", nargs="?")
print(p.parse_args())
'''


def test_newuser42_n4_declared_options_are_read_from_argparse_text() -> None:
    assert declared_options(ARGPARSE) == ("--fail", "--epochs", "--help")
    assert declared_options(ARGPARSE.encode()) == ("--fail", "--epochs", "--help")
    # cannot be known from the text: no argparse, a name built at run time, unknown options tolerated
    assert declared_options("import sys\nprint(sys.argv)\n") is None
    assert declared_options(ARGPARSE + 'for n in ("a",):\n    p.add_argument(f"--{n}")\n') is None
    assert declared_options(ARGPARSE.replace("parse_args()", "parse_known_args()")) is None
    # a text past the bound the shared service scans is not read (a hostile 8 MiB held it for 0.8 s)
    from jupyter_sched.definitions.script_options import SCANNED_CHARS

    assert declared_options(ARGPARSE + "#" * SCANNED_CHARS) is None


def test_newuser42_n4_unknown_parameter_of_a_script_is_noted_with_a_guess() -> None:
    note = script_parameters_note(ARGPARSE, {"fial": "yes"}, "train.py")
    assert note.startswith("parameter 'fial' is not an option of train.py (--fail, --epochs) — did you mean 'fail'?")
    assert "Its runs get --fial yes, which train.py refuses" in note, note
    # options it takes, a unique prefix (argparse's abbreviation) and the help are no fault
    assert script_parameters_note(ARGPARSE, {"fail": "yes", "epochs": 3}, "train.py") == ""
    assert script_parameters_note(ARGPARSE, {"epo": 3}, "train.py") == ""
    assert "'epo'" in script_parameters_note(ARGPARSE.replace("ArgumentParser()", "ArgumentParser(allow_abbrev=False)"),
                                             {"epo": 3}, "train.py")
    # several named at once
    both = script_parameters_note(ARGPARSE, {"fial": 1, "epoch_s": 2}, "train.py")
    assert both.startswith("parameters 'fial', 'epoch_s' are not options of train.py"), both


def test_newuser42_n4_unknowable_options_said_on_a_save_only() -> None:
    text = "import sys\nprint(sys.argv)\n"
    saved = script_note(text, {"fial": "yes"}, "run.py", saved=True)
    assert saved.startswith("run.py's options cannot be read without running it") and "--fial yes" in saved, saved
    assert script_note(text, {"fial": "yes"}, "run.py", saved=False) == ""  # a submit: nothing known, nothing said
    assert script_note(ARGPARSE, {}, "train.py", saved=True) == ""


def test_newuser42_n4_failed_run_names_the_parameter_and_the_fix() -> None:
    message = ("exited with code 2; last lines: usage: run.py [-h] [--fail FAIL]\n"
               "run.py: error: unrecognized arguments: --fial yes")
    hint = unknown_option_hint(message, {"fial": "yes", "days": 3}, "nightly job")
    assert hint == ("parameter 'fial' of nightly job is not among the script's options: remove it (jupyter-sched "
                    "definitions edit 'nightly job' --unset-parameter fial) or give the script's own option name "
                    "(-p NAME=VALUE)"), hint
    assert unknown_option_hint(message, {"days": 3}, "nightly") == ""  # the failure is not its parameters'
    assert unknown_option_hint("exited with code 1; last lines: KeyError", {"fial": 1}, "nightly") == ""


def test_newuser42_n4_show_and_edit_say_cpu_memory_nvlink_and_env() -> None:
    """What create/edit now take is said by ``show`` (runs_text) and by an edit's ``changed:`` line; variables by
    name only (a value may be a secret)."""
    from jupyter_sched.wording.definitions import changes_text, runs_text

    before = {"name": "n", "script": "/w/train.py", "job": {"gpus": 0, "cpu": 2, "memory": "64MiB",
                                                            "env": {"SEED": "7", "TOKEN": "s3cret"}}}
    text = runs_text(before)
    assert "cpu 2 · memory 64MiB · env SEED, TOKEN" in text and "s3cret" not in text, text
    after = {**before, "script": "/w/other.py", "job": {**before["job"], "env": {"SEED": "8"}, "nvlink": True}}
    changed = changes_text(before, after)
    assert "runs /w/train.py → /w/other.py" in changed and "env SEED, TOKEN → SEED" in changed, changed
    assert "nvlink (default) → NVLink GPUs" in changed, changed
