"""Privacy programs of the tests: true claims (proved), false claims (never proved)."""

TRUE = {
    "laplace": """
program laplace(x: real, eps: real)
  requires eps > 0
  neighbours abs(x - x') <= 1
  private eps on a
{
  a ~ lap(x, 1 / eps);
}""",
    "noisySum": """
program noisySum(q: real[], n: int, eps: real)
  requires n >= 1 && eps > 0
  neighbours sum(i in 0..n: abs(q[i] - q'[i])) <= 1
  private eps on s
{
  s := 0;
  for i in 0..n {
    a ~ lap(q[i], 1 / eps);
    s := s + a;
  }
}""",
    "histogram": """
program histogram(q: real[], n: int, eps: real)
  requires n >= 1 && eps > 0
  neighbours sum(i in 0..n: abs(q[i] - q'[i])) <= 1
  private eps on h
{
  for i in 0..n {
    h[i] ~ lap(q[i], 1 / eps);
  }
}""",
    "everyAnswer": """
program everyAnswer(q: real[], n: int, eps: real)
  requires n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private eps on h
{
  for i in 0..n {
    h[i] ~ lap(q[i], n / eps);
  }
}""",
    "whileSum": """
program whileSum(q: real[], n: int, eps: real)
  requires n >= 1 && eps > 0
  neighbours sum(i in 0..n: abs(q[i] - q'[i])) <= 1
  private eps on s
{
  s := 0;
  i := 0;
  while (i < n) {
    a ~ lap(q[i], 1 / eps);
    s := s + a;
    i := i + 1;
  }
}""",
    "discrete": """
program discrete(c: int, eps: real)
  requires eps > 0
  neighbours abs(c - c') <= 1
  private eps, 0 on a
{
  a ~ dlap(c, 1 / eps);
}""",
    "publicCoin": """
program publicCoin(x: real, p: real, eps: real)
  requires eps > 0 && 0 <= p && p <= 1
  neighbours abs(x - x') <= 1
  private eps on a, b
{
  b ~ bern(p);
  if (b) { a ~ lap(x, 1 / eps); } else { a ~ lap(2 * x, 2 / eps); }
}""",
    # one answer moves (an exists in neighbours): the cost is paid at the witness only
    "oneMoves": """
program oneMoves(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours exists k in 0..n: abs(q[k] - q'[k]) <= 1 && (forall j in 0..n: j == k || q[j] == q'[j])
  private    eps on h
{
  for i in 0..n {
    h[i] ~ lap(q[i], 1 / eps);
  }
}""",
    # report-noisy-max with one-sided exponential noise (the exponential mechanism)
    "noisyMaxExp": """
program noisyMaxExp(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on out
{
  best := 0;
  out := 0;
  for i in 0..n {
    v ~ exp(q[i], 2 / eps);
    if (i == 0 || v > best) { best := v; out := i; }
  }
}""",
    # report-noisy-max: proved value by value, the winner's noise shifted by 2
    "reportNoisyMax": """
program reportNoisyMax(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on out
{
  best := 0;
  out := 0;
  for i in 0..n {
    v ~ lap(q[i], 2 / eps);
    if (i == 0 || v > best) { best := v; out := i; }
  }
}""",
    # AboveThreshold: threshold noise shifted by 1, the positive answer's by 2
    "aboveThreshold": """
program aboveThreshold(q: real[], n: int, T: real, eps: real)
  requires   n >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on out
{
  t ~ lap(T, 2 / eps);
  i := 0;
  stop := false;
  while (i < n) {
    if (!stop) {
      v ~ lap(q[i], 4 / eps);
      if (v >= t) { out[i] := true; stop := true; } else { out[i] := false; }
    }
    i := i + 1;
  }
}""",
}

FALSE = {
    # the noise is half what eps needs
    "tooLittleNoise": """
program tooLittleNoise(x: real, eps: real)
  requires eps > 0
  neighbours abs(x - x') <= 1
  private eps on a
{
  a ~ lap(x, 1 / (2 * eps));
}""",
    # every answer may move: n·eps, not eps
    "wrongRelation": """
program wrongRelation(q: real[], n: int, eps: real)
  requires n >= 2 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private eps on h
{
  for i in 0..n {
    h[i] ~ lap(q[i], 1 / eps);
  }
}""",
    "branchOnSecret": """
program branchOnSecret(q: real, eps: real)
  requires eps > 0
  neighbours abs(q - q') <= 1
  private eps on out
{
  a ~ lap(q, 1 / eps);
  if (q > 0) { out := 1; } else { out := 0; }
}""",
    "indexBySecret": """
program indexBySecret(q: int, eps: real)
  requires eps > 0
  neighbours abs(q - q') <= 1
  private eps on h
{
  h[q] := 1;
}""",
    "releaseSecret": """
program releaseSecret(q: real, eps: real)
  requires eps > 0
  neighbours abs(q - q') <= 1
  private eps on out, a
{
  a ~ lap(q, 1 / eps);
  out := q;
}""",
    # sparse vector that releases the noisy answer above the threshold (not eps-private)
    "svtReleasesAnswer": """
program svtReleasesAnswer(q: real[], n: int, T: real, eps: real)
  requires   n >= 2 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on out
{
  t ~ lap(T, 2 / eps);
  i := 0;
  stop := false;
  while (i < n) {
    if (!stop) {
      v ~ lap(q[i], 4 / eps);
      if (v >= t) { out[i] := v; stop := true; } else { out[i] := 0; }
    }
    i := i + 1;
  }
}""",
    "oneMovesTooLittle": """
program oneMovesTooLittle(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours exists k in 0..n: abs(q[k] - q'[k]) <= 1 && (forall j in 0..n: j == k || q[j] == q'[j])
  private    eps on h
{
  for i in 0..n {
    h[i] ~ lap(q[i], 1 / (2 * eps));
  }
}""",
    # sparse vector that does not stop at the first positive answer: pays for every one
    "svtNoStop": """
program svtNoStop(q: real[], n: int, T: real, eps: real)
  requires   n >= 2 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on out
{
  t ~ lap(T, 2 / eps);
  for i in 0..n {
    v ~ lap(q[i], 4 / eps);
    if (v >= t) { out[i] := true; } else { out[i] := false; }
  }
}""",
    # a sum in `requires` read in both runs is two different sums (regression: one z3 function
    # for both made q[0] == q'[0] an assumption and "proved" this deterministic release)
    "sumInRequires": """
program sumInRequires(q: real[], n: int, eps: real)
  requires n >= 2 && eps > 0 && sum(i in 0..n: q[i]) == q[0]
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private eps on out
{
  out := q[0];
}""",
    # the secret decides how many draws there are
    "secretLoop": """
program secretLoop(k: int, eps: real)
  requires eps > 0 && k >= 0
  neighbours abs(k - k') <= 1
  private eps on s
{
  s := 0;
  for i in 0..k {
    a ~ lap(0, 1 / eps);
    s := s + a;
  }
}""",
    # the scale reads the secret
    "secretScale": """
program secretScale(x: real, eps: real)
  requires eps > 0 && x > 0
  neighbours abs(x - x') <= 1
  private eps on a
{
  a ~ lap(0, x / eps);
}""",
}

# the loop draws nothing and the release comes after it (regression: the loop's cost was
# havocked without a bound, so this true claim was unknown)
TRUE["partialSum"] = """
program partialSum(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours exists k in 0..n: abs(q[k] - q'[k]) <= 1 && (forall j in 0..n: j == k || q[j] == q'[j])
  private    eps on out
{
  s := 0;
  i := 0;
  while (i < n) {
    s := s + q[i];
    i := i + 1;
  }
  out ~ lap(s, 1 / eps);
}"""

# a sparse vector that stops after c positive answers, the guard a conjunction
TRUE["svtCount"] = """
program svtCount(q: real[], n: int, T: real, c: int, eps: real)
  requires   n >= 1 && c >= 1 && eps > 0
  neighbours forall i in 0..n: abs(q[i] - q'[i]) <= 1
  private    eps on out
{
  t ~ lap(T, 2 / eps);
  count := 0;
  i := 0;
  while (i < n && count < c) {
    a ~ lap(q[i], 4 * c / eps);
    if (a >= t) { out[i] := true; count := count + 1; } else { out[i] := false; }
    i := i + 1;
  }
}"""

# the exact sum released once: |t' - t| grows by at most the L1 relation's prefix sum
# (regression: no invariant bounded t' - t, so this true claim was unknown)
TRUE["sumThenRelease"] = """
program sumThenRelease(q: real[], n: int, eps: real)
  requires   n >= 1 && eps > 0
  neighbours sum(i in 0..n: abs(q[i] - q'[i])) <= 1
  private    eps on s
{
  t := 0;
  for i in 0..n {
    t := t + q[i];
  }
  s ~ lap(t, 1 / eps);
}"""
