//go:build !unix

package format

const noFollow = 0
