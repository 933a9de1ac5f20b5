/// A count with its noun, as people write it: "1 bad line", "0 bad lines", "2 bad lines". Both
/// forms are spelled out by the caller, so no rule of English plurals hides here.
func counted(_ count: some BinaryInteger, _ singular: String, _ plural: String) -> String {
    "\(count) " + (count == 1 ? singular : plural)
}
