"""The review reads a learner's cells for what the sandbox cannot prevent, and says where it found it."""

from __future__ import annotations

from transformer_course.grading.review import bounded_review, review

SOFTMAX = ["torch.softmax", "torch.Tensor.softmax", "torch.nn.functional.softmax"]


def test_a_library_softmax_in_an_answer_cell_is_reported_with_the_cell():
    findings = review([("cell softmax", "def softmax(s):\n    return torch.softmax(s, dim=-1)\n")], SOFTMAX)
    assert findings == [
        "cell softmax: uses the library's own softmax (torch.Tensor.softmax, torch.nn.functional.softmax, "
        "torch.softmax)"
    ]


def test_the_tensor_method_and_a_name_built_from_a_string_are_reported_too():
    assert review([("a", "weights = scores.softmax(-1)\n")], SOFTMAX)
    assert review([("b", "weights = getattr(F, 'softmax')(scores, -1)\n")], SOFTMAX)
    assert review([("c", "from torch.nn.functional import softmax as sm\n")], SOFTMAX)


def test_the_learners_own_function_of_the_same_name_is_not_reported():
    honest = (
        "def softmax(scores):\n"
        "    e = (scores - scores.max(-1, keepdim=True).values).exp()\n"
        "    return e / e.sum(-1, keepdim=True)\n"
    )
    assert review([("cell softmax", honest), ("cell attention", "weights = softmax(scores)\n")], SOFTMAX) == []


def test_meta_programming_is_reported():
    findings = review([("added cell 3", "import importlib, inspect\nexec(inspect.getsource(m))\n")], [])
    assert findings == ["added cell 3: meta-programming (exec, importlib, inspect)"]


def test_ipython_magics_and_shell_escapes_are_reported_as_get_ipython():
    findings = review([("added cell 2", "!cat ../solutions/*.ipynb\n%load_ext something\n")], [])
    assert findings == ["added cell 2: meta-programming (get_ipython)"]


def test_changing_a_librarys_attribute_is_reported():
    findings = review([("cell project-qkv", "torch.testing.assert_close = lambda *a, **k: None\n")], [])
    assert findings == ["cell project-qkv: changes a library (torch.testing.assert_close)"]


def test_file_and_process_access_is_reported():
    findings = review([("added cell 5", "import subprocess\nopen('/etc/passwd').read()\n")], [])
    assert findings == ["added cell 5: file, process or network access (open, subprocess)"]


def test_a_cell_that_does_not_parse_is_skipped_not_fatal():
    assert review([("cell x", "def broken(:\n")], SOFTMAX) == []


def test_everyday_methods_that_share_a_name_with_a_builtin_are_not_reported():
    honest = (
        "model.eval()\nmodel.train(True)\nweights = task.encode('train')\nfor module in model.modules():\n    pass\n"
    )
    assert review([("cell greedy-decode", honest)], ["transformer_course.training.loop.train"]) == []


def test_a_package_function_reached_through_its_module_is_reported():
    findings = review(
        [("cell train-model", "result = tc.training.loop.train(task, config)\n")],
        ["transformer_course.training.loop.train"],
    )
    assert findings == ["cell train-model: uses the library's own train (transformer_course.training.loop.train)"]


def test_defining_a_torch_function_hook_is_reported():
    findings = review(
        [
            (
                "added cell 4",
                "class Liar(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, f, t, a=(), k=None):\n  "
                "      return True\n",
            )
        ],
        [],
    )
    assert findings == ["added cell 4: meta-programming (__torch_function__)"]


def test_a_librarys_private_names_are_reported_however_imported():
    findings = review(
        [
            ("cell softmax", "def softmax(s):\n    return torch._softmax(s, -1, False)\n"),
            ("cell attention", "from torch.nn.functional import _canonical_mask\nimport torch._C as C\n"),
            ("cell mask", "out = torch.randn(3)._version + torch.nn.functional._none_or_dtype(None)\n"),
        ],
        [],
    )
    assert findings == [
        "cell softmax: uses a library's private names (torch._softmax)",
        "cell attention: uses a library's private names (torch._C, torch.nn.functional._canonical_mask)",
        "cell mask: uses a library's private names (torch.nn.functional._none_or_dtype, torch…._version)",
    ]


def test_dunder_names_and_the_learners_own_private_names_are_not_reported():
    own = "class Norm(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self._eps = 1e-5\n"
    assert review([("cell norm", own + "x = torch.__version__\n")], []) == []


def test_the_review_stops_at_its_size_limit():
    findings = bounded_review([("cell a", "x = 1\n" * 1_000)], [], max_bytes=1_000)
    assert len(findings) == 1 and findings[0].startswith("not reviewed"), findings


def test_the_review_stops_at_its_time_limit():
    findings = bounded_review([("cell a", "x = 1\n")], [], seconds=0.001)
    assert len(findings) == 1 and "not reviewed" in findings[0] and "longer than" in findings[0], findings


def test_the_review_in_its_own_process_finds_what_the_review_finds():
    findings = bounded_review([("cell a", "import torch\ny = torch.softmax(x, -1)\n")], ["torch.softmax"])
    assert any("torch.softmax" in finding for finding in findings), findings
