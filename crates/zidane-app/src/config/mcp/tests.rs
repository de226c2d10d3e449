use super::expand_text;

#[test]
fn variables_expand_with_and_without_defaults() {
    let var = |name: &str| (name == "TOKEN").then(|| "t0k".to_owned());
    assert_eq!(expand_text("Bearer ${TOKEN}", var).unwrap(), "Bearer t0k");
    assert_eq!(expand_text("${PORT:-8080}/x", var).unwrap(), "8080/x");
    assert_eq!(expand_text("${TOKEN:-none}", var).unwrap(), "t0k");
    assert_eq!(expand_text("${MISSING}", var).unwrap_err(), "MISSING");
    assert_eq!(
        expand_text("no vars, ${ unclosed", var).unwrap(),
        "no vars, ${ unclosed"
    );
}
