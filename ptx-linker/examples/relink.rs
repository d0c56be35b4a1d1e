//! Re-emits one PTX file alone (debug aid): `cargo run --example relink -- f.ptx`.
fn main() {
    let path = std::env::args().nth(1).expect("usage: relink FILE");
    let text = std::fs::read_to_string(&path).expect("read");
    let opts = ptx_linker::LinkOptions {
        allow_unresolved: true,
        ..Default::default()
    };
    match ptx_linker::link(&[ptx_linker::LinkInput::object(path, text)], &opts) {
        Ok(o) => print!("{}", o.ptx),
        Err(e) => eprintln!("{}", e.rendered),
    }
}
