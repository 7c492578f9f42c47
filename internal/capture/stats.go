package capture

// DefragStats count fragment reassembly (the decoder's decode.FragStats,
// copied into Stats).
type DefragStats struct {
	Reassembled uint64 // datagrams reassembled from fragments
	Timeouts    uint64 // datagrams dropped: not complete within their timeout
	Evicted     uint64 // datagrams dropped at MaxDatagrams or MaxBytes, oldest first
	Invalid     uint64 // datagrams dropped: inconsistent fragments or too long
}
