//go:build !race

package bitmapwindow_test

const raceEnabled = false
