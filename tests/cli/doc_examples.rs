//! The command-line examples in the docs run as shown: each ```console block of the
//! pages below is run against the real binary by trycmd, and its output must match.

#[test]
fn the_command_line_examples_in_the_docs_run_as_shown() {
    trycmd::TestCases::new()
        .register_bin(
            "chatplate",
            std::path::Path::new(env!("CARGO_BIN_EXE_chatplate")),
        )
        .case("docs/cli.md");
}
