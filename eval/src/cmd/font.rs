//! The one font of the eval charts. plotters is built without font-kit (no system font
//! lookup, no fontconfig): its `ab_glyph` text needs each family registered from bytes
//! before anything draws text, so every chart calls [`register`] first. The family the
//! charts name, `"sans-serif"`, is Noto Sans Regular from the `notosans` crate (SIL Open
//! Font License); bold or italic requests fall back to it.

use std::sync::OnceLock;

/// The family name the charts use.
pub(crate) const FAMILY: &str = "sans-serif";

/// Registers [`FAMILY`] with plotters, once per process; later calls return the first
/// call's outcome.
pub(crate) fn register() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, plotters::style::FontStyle::Normal, notosans::REGULAR_TTF)
            .is_ok()
    });
    anyhow::ensure!(ok, "the embedded Noto Sans font could not be read");
    Ok(())
}

#[cfg(test)]
mod tests {
    use plotters::prelude::*;

    use super::*;

    const W: u32 = 400;
    const H: u32 = 160;
    /// The rows a 24 px caption with the charts' margin is drawn in.
    const CAPTION_ROWS: std::ops::Range<usize> = 0..48;

    /// Non-white pixels in the caption rows of a chart drawn into a buffer.
    fn caption_ink(caption: Option<&str>) -> usize {
        let mut buf = vec![0u8; (W * H * 3) as usize];
        {
            let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
            root.fill(&WHITE).unwrap();
            let mut builder = ChartBuilder::on(&root);
            builder.margin(8);
            if let Some(c) = caption {
                builder.caption(c, (FAMILY, 24));
            }
            builder.build_cartesian_2d(0f64..1.0, 0f64..1.0).unwrap();
            root.present().unwrap();
        }
        let row = W as usize * 3;
        buf[CAPTION_ROWS.start * row..CAPTION_ROWS.end * row]
            .chunks(3)
            .filter(|p| p != &[255, 255, 255])
            .count()
    }

    #[test]
    fn captions_are_drawn_with_the_embedded_font() {
        register().unwrap();
        register().unwrap();
        assert_eq!(caption_ink(None), 0, "nothing but the caption draws in its rows");
        let ink = caption_ink(Some("recall@k"));
        assert!(ink > 200, "the caption left {ink} non-white pixels");
    }

    #[test]
    fn a_chart_with_text_is_written_as_png() {
        register().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("chart.png");
        {
            let root = BitMapBackend::new(&out, (W, H)).into_drawing_area();
            root.fill(&WHITE).unwrap();
            let mut chart = ChartBuilder::on(&root)
                .caption("recall@k", (FAMILY, 24))
                .x_label_area_size(30)
                .y_label_area_size(40)
                .build_cartesian_2d(0f64..1.0, 0f64..1.0)
                .unwrap();
            chart.configure_mesh().x_desc("k").y_desc("recall").draw().unwrap();
            chart.draw_series(LineSeries::new([(0.0, 0.2), (1.0, 0.9)], BLUE.stroke_width(2))).unwrap();
            root.present().unwrap();
        }
        let png = std::fs::read(&out).unwrap();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{} is not a PNG", out.display());
    }
}
