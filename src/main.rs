fn main() {
    println!("oscost");
}
