"""Grading tools built on nbgrader: release learner notebooks, autograde submissions, self-check.

The map, by the two seams: the chain of steps that grades a class, and the sandbox's wall.

**The chain**: :mod:`.autograde` runs its steps, and its docstring gives them in their order, the one place that
does. A module each: :mod:`.self_test` (can a sandbox import the course?), :mod:`.intake` (a folder read as data),
:mod:`.class_list` (what the roster and the LMS say of each submission), :mod:`.class_grading` (each submission's
steps, a few at a time), :mod:`.kept_submissions` (what was handed in, kept in ``submitted/``),
:mod:`.nbgrader_steps` (nbgrader's own steps around the run), :mod:`.sandboxed_run` (one submission run, in a worker
of :mod:`.workers`, given a :mod:`.submission_run` and giving back its outcome), whose test cells :mod:`.judging`
judges, :mod:`.review` (what the instructor should look at), :mod:`.written_answers` (a manual score and the version
of the answer it was given to), :mod:`.feedback` (the learner's page) and :mod:`.report` (the class's rows, each a
:mod:`.grade_row`, from the gradebook and :mod:`.run_record`). The work on each student is one record,
:mod:`.submission`; how a submission ended is said in one vocabulary, :mod:`.status`.

**The grader's side of the wall**: :mod:`.sandbox` (bubblewrap and cgroups), :mod:`.execute` (a session:
the notebook's cells sent one by one, a hidden test's questions), :mod:`.pipe` (the runner's pipes, trusted
for nothing), :mod:`.hidden` (hidden tests, judged in the grader's process), :mod:`.redaction` (the package
without what the learner writes) and :mod:`.limits`.

**Inside the sandbox**: :mod:`.inside` (the runner, the probe, plain data), which imports nothing of the grader's.

**The course and the other commands**: :mod:`.course` (the course directory and nbgrader), :mod:`.errors`
(:class:`~.errors.CourseError`, what a user can mend, told in one line), :mod:`.context` (what
every step is given: the assignment's facts, read once, and the gradebook), :mod:`.policy` (``grading.yml``),
:mod:`.nbgrader_cells` (nbgrader's marks on cells, a cell's source), :mod:`.locked_cells` (nbgrader's checksums),
:mod:`.student_ids`, :mod:`.release` and :mod:`.notebook_translation`, :mod:`.exchange` (nbgrader's
exchange in one language), the learner's :mod:`.check` (with :mod:`.cell_errors`, the cell that caused a
failure, which the feedback page shows too), :mod:`.gradebook`, :mod:`.roster`, :mod:`.lateness`,
:mod:`.submission_times`, :mod:`.lms` (the LMSs' downloads), :mod:`.exports` (their grade imports),
:mod:`.lms_feedback` (their bulk feedback uploads), :mod:`.pending`, :mod:`.similarity`, :mod:`.publish` (with
:mod:`.answer_key`, the answers it looks for), and the command line: :mod:`.commands` and :mod:`.after_grading`,
on :mod:`.command_line` (what every command shares) and :mod:`.terminal` (what they print, escaped).
"""

import sys

# As inside/runner.py explains: jsonschema's slow IRI checker is kept out of every grading process.
sys.modules.setdefault("rfc3987_syntax", None)
