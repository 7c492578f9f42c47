// Package dsbf is the dynamic splittable Bloom filter (DSBF) of Yuan, Yang
// and Liu (the design's literature, seeds 000 and 001): a tree whose root
// sends a URL to one of c leaves by a location hash, each leaf a classic
// Bloom filter of m bits and k hash functions; a leaf whose false-positive
// rate reaches its bound splits into c children with a location hash of
// their own, so the capacity grows geometrically with the height.
//
// # Splits
//
// The paper's leaves keep the set of their URLs so that a split can
// re-insert them into the children; a filter cannot list its elements, and
// keeping them would cost more than the filter. Here a split leaf is
// frozen instead: it takes no more URLs and stays in the tree, and a query
// consults every frozen leaf on its path as well as the live leaf at its
// end ("during and after the split, queries consult the old leaf and the
// child"). Each frozen leaf on a path adds its rate to the query's, so the
// bounds shrink with depth: a leaf at depth d splits when its own rate
// reaches FMax·(1−r)·r^(d−1) (r = Params.Ratio, ½ by default), and the
// rates along any path sum to less than FMax however tall the tree grows —
// the scalable Bloom filter's tightening (Almeida et al., 2007) applied to
// the DSBF's tree.
//
// # Hashes
//
// A URL's normal form is hashed twice with SipHash-1-3 under fixed public
// keys (this is not a keyed layout: anyone can compute positions). The
// first hash and the second (odd) give the k positions by double hashing,
// (h1 + i·h2) mod m (Kirsch and Mitzenmacher); the location hash at depth
// d is a mix of h2 and d, so each level sends URLs its own way.
package dsbf
