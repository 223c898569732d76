//! Scenario text to the typed document. Structural errors (wrong type,
//! unknown or missing field) name their path, inside model families too.

use super::check::FieldError;
use super::document::Scenario;
use super::tagged::{join_path, PATH_MARK};

/// Parses a scenario from JSON text. A valid document is parsed once,
/// without tracking paths (that tracking was a sixth of a large
/// scenario's set-up); a faulty one is parsed again with it, so that its
/// error names the field.
pub fn parse_json(text: &str) -> Result<Scenario, Vec<FieldError>> {
    serde_json::from_str(text).or_else(|_| parse_tracked(text))
}

fn parse_tracked(text: &str) -> Result<Scenario, Vec<FieldError>> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.inner().to_string();
        // Line/column refer to the JSON handed over, not the user's file.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        let (path, message) = resolve(path, msg);
        let path = if path.is_empty() || path == "." {
            "(scenario)".to_string()
        } else {
            path
        };
        vec![FieldError { path, message }]
    })
}

/// Moves the paths that model families put at the start of a message
/// (see [`super::tagged::nested`]) onto the path.
fn resolve(mut path: String, mut msg: String) -> (String, String) {
    while let Some(rest) = msg.strip_prefix(PATH_MARK) {
        let Some((inner, m)) = rest.split_once(PATH_MARK) else {
            break;
        };
        path = join_path(&path, inner);
        msg = m.to_string();
    }
    (path, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_are_joined_in_order() {
        let m = format!("{PATH_MARK}queue{PATH_MARK}{PATH_MARK}[2].x{PATH_MARK}bad");
        assert_eq!(
            resolve("links[0]".into(), m),
            ("links[0].queue[2].x".to_string(), "bad".to_string())
        );
        assert_eq!(
            resolve(".".into(), format!("{PATH_MARK}a{PATH_MARK}m")),
            ("a".to_string(), "m".to_string())
        );
    }
}
