"""The code that runs inside the sandbox, beside the learner's notebook: nothing here is the grader's.

* :mod:`.runner` — the program the sandbox starts: a kernel, and one cell executed per request;
* :mod:`.probe` — the kernel's side of a hidden test: run the learner's code, answer with data;
* :mod:`.plain_data` — the data that crosses the wall, both ways (tensors, numbers, strings).

These modules import nothing of the grader's (``tests/grading/test_sandbox_wall.py`` reads their
imports): whatever the sandbox can read of the course package, it finds no grading logic here, and the
grader only reads what they answer.
"""
