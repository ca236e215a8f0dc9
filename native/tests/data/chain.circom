pragma circom 2.0.0;

// A tiny circuit for the format readers' tests: two public inputs, one output, a private input,
// coefficients other than 1 (negative, constants on wire 0) and one linear constraint.
template Chain(n) {
    signal input x;
    signal input k;
    signal input y;
    signal output out;
    signal t[n];
    t[0] <== x * y;
    for (var i = 1; i < n; i++) {
        t[i] <== (t[i-1] + k) * (y - i);
    }
    out <== t[n-1] * 3 + 7;
}

component main {public [x, k]} = Chain(6);
