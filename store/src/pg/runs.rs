//! Ported in a later commit.
