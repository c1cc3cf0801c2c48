//! Prints lokivl's verdict for each argument (a debugging aid).
fn main() {
    for q in std::env::args().skip(1) {
        match logql_parser::parse(&q) {
            Ok(e) => println!("OK  {q}  =>  {e}"),
            Err(e) => println!("ERR {q}  =>  {e}"),
        }
    }
}
