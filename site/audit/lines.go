package audit

import "bufio"

// maxLine is the longest line read back (the reader's buffer); longer lines are
// skipped whole.
const maxLine = 1 << 20

// nextLine reads one complete line (ending in '\n') from rd and the bytes it took.
// A line longer than rd's buffer is consumed and returned as nil with its length. A
// last line without '\n' (torn by a crash, or still being written) is not consumed:
// the error is then io.EOF and n is 0.
func nextLine(rd *bufio.Reader) (line []byte, n int64, err error) {
	line, err = rd.ReadSlice('\n')
	n = int64(len(line))
	if err == nil {
		return line, n, nil
	}
	if err != bufio.ErrBufferFull {
		return nil, 0, err
	}
	for err == bufio.ErrBufferFull {
		line, err = rd.ReadSlice('\n')
		n += int64(len(line))
	}
	if err != nil {
		return nil, 0, err
	}
	return nil, n, nil
}
