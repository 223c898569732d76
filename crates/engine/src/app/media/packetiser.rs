//! Frames into RTP packets: as many full packets of `max_payload` bytes as
//! the frame fills and one with the rest (the last carries the RTP marker
//! bit, RFC 3550 5.1, as video payload formats use it).

/// The payload sizes of a frame of `bytes`, in order.
pub fn split(bytes: u32, max_payload: u32) -> impl ExactSizeIterator<Item = u32> {
    let max = max_payload.max(1);
    let n = bytes.div_ceil(max).max(1);
    (0..n).map(move |i| {
        if i + 1 < n {
            max
        } else {
            bytes - max * (n - 1)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn full_packets_then_the_rest() {
        assert_eq!(split(2500, 1000).collect::<Vec<_>>(), [1000, 1000, 500]);
        assert_eq!(split(2000, 1000).collect::<Vec<_>>(), [1000, 1000]);
        assert_eq!(split(1, 1000).collect::<Vec<_>>(), [1]);
        assert_eq!(split(0, 1000).collect::<Vec<_>>(), [0]);
    }
}
