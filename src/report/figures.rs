//! How figures are laid out in the HTML report (the files a command writes them into go
//! through cli::outputs). Which figures a family draws is its own (report::family); the HTML
//! report and the commands' `--svg` options ask the same family, so a figure looks the same
//! wherever it is read.

/// How a figure is laid out in the HTML report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// Full width.
    Wide,
    /// One of a grid of small multiples.
    Small,
}
