package fsql

// WaitBackgroundParses waits for parses that outlived their cancelled
// query (statements over 64 KB parse in a goroutine of their own), so a
// test that cancels one leaves no goroutine behind for a later test's
// leak check to trip on.
func WaitBackgroundParses() { backgroundParses.Wait() }
