//go:build !linux

package main

import "os"

func isTerminal(f *os.File) bool { return false }
