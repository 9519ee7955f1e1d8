"""What was built from what: the SQLite state in the output that makes builds incremental.

One file, ``.sitegen-state.sqlite``, in the published directory: a full build writes a new
one into the staging directory, so the atomic swap replaces site and state together; an
incremental build updates rows in one transaction, committed after the site's files are in
place, so a killed build rolls back and the next one redoes it. Per log it keeps its
identity (size, mtime), its SHA-256 and what the map step made of it; per job the columns
the reduce queries and the whole ``JobSummary`` as one encoded blob (in a table of its own,
so that queries over every log read small rows), so fields added to it travel along without
a schema change; per job name the figures of its trend. A state that is missing, of another
layout or damaged (SQLite or the decoder says so when it is read) is ignored: that costs a
full build, never a wrong site.

Modules: ``schema`` (tables, encoding), ``records`` (what is recorded), ``identity`` (digests),
``known``, ``writes`` and ``queries`` (the planner's reads, the build's writes, the reduce's
reads), ``store`` (``State``, opened and created), ``legacy`` (what any version's state names).
"""
