//! Unit tests of `remote::report`, `remote::report_rows` and `remote::sizing`.
