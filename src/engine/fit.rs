//! Least squares with blocks: y = α_block + Σ β_j x_j. Each block (a round of timed batches)
//! has its own intercept, which absorbs what drifts between rounds (the host, the frequency)
//! so that the slopes come from differences within a round. Solved by centring each block
//! (Frisch–Waugh–Lovell) and the normal equations of the few slopes left; with a handful of
//! regressors a dependency on a linear-algebra crate would be larger than the solve.

/// A fitted model.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The slopes, one per regressor.
    pub coef: Vec<f64>,
    /// Their covariance: σ² (X̃'X̃)⁻¹, σ² the residual variance.
    pub cov: Vec<Vec<f64>>,
    /// Each row's residual, in the rows' order.
    pub residuals: Vec<f64>,
    /// Degrees of freedom of the residual: rows − blocks − regressors.
    pub dof: usize,
    /// Each block's intercept, by block in the order first seen.
    pub intercepts: Vec<f64>,
}

impl Fit {
    /// The residual standard error, √(Σ e² / dof); infinite without degrees of freedom.
    pub fn sigma(&self) -> f64 {
        if self.dof == 0 {
            return f64::INFINITY;
        }
        (self.residuals.iter().map(|e| e * e).sum::<f64>() / self.dof as f64).sqrt()
    }

    /// Standard error of slope `j`.
    pub fn se(&self, j: usize) -> f64 {
        self.cov[j][j].max(0.0).sqrt()
    }

    /// Variance of Σ w_j β_j (w a vector of weights, e.g. events per RPC).
    pub fn var_of(&self, w: &[f64]) -> f64 {
        let mut v = 0.0;
        for (i, wi) in w.iter().enumerate() {
            for (j, wj) in w.iter().enumerate() {
                v += wi * wj * self.cov[i][j];
            }
        }
        v.max(0.0)
    }
}

/// One observation: its block, its value and its regressors.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub block: u32,
    pub y: f64,
    pub x: Vec<f64>,
}

/// Fit `rows` (all with as many regressors); None when the regressors are not independent
/// within blocks (a column that never varies, or two that vary together) or there are none.
pub fn blocked(rows: &[Row]) -> Option<Fit> {
    let k = rows.first()?.x.len();
    if k == 0 || rows.iter().any(|r| r.x.len() != k) {
        return None;
    }
    let mut blocks: Vec<u32> = Vec::new();
    for r in rows {
        if !blocks.contains(&r.block) {
            blocks.push(r.block);
        }
    }
    // Each block's means of y and x.
    let means: Vec<(f64, Vec<f64>)> = blocks
        .iter()
        .map(|b| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.block == *b).collect();
            let n = mine.len() as f64;
            let y = mine.iter().map(|r| r.y).sum::<f64>() / n;
            let x = (0..k)
                .map(|j| mine.iter().map(|r| r.x[j]).sum::<f64>() / n)
                .collect();
            (y, x)
        })
        .collect();
    let at = |r: &Row| blocks.iter().position(|b| *b == r.block).expect("seen");
    let centred: Vec<(f64, Vec<f64>)> = rows
        .iter()
        .map(|r| {
            let (my, mx) = &means[at(r)];
            (r.y - my, r.x.iter().zip(mx).map(|(x, m)| x - m).collect())
        })
        .collect();
    let mut xtx = vec![vec![0.0; k]; k];
    let mut xty = vec![0.0; k];
    for (y, x) in &centred {
        for i in 0..k {
            xty[i] += x[i] * y;
            for j in 0..k {
                xtx[i][j] += x[i] * x[j];
            }
        }
    }
    let inv = invert(&xtx)?;
    let coef: Vec<f64> = (0..k)
        .map(|i| (0..k).map(|j| inv[i][j] * xty[j]).sum())
        .collect();
    let dot = |x: &[f64]| x.iter().zip(&coef).map(|(a, b)| a * b).sum::<f64>();
    let residuals: Vec<f64> = centred.iter().map(|(y, x)| y - dot(x)).collect();
    let dof = rows.len().saturating_sub(blocks.len() + k);
    let s2 = if dof == 0 {
        f64::INFINITY
    } else {
        residuals.iter().map(|e| e * e).sum::<f64>() / dof as f64
    };
    let cov = inv
        .iter()
        .map(|row| row.iter().map(|v| v * s2).collect())
        .collect();
    let intercepts = means.iter().map(|(y, x)| y - dot(x)).collect();
    Some(Fit {
        coef,
        cov,
        residuals,
        dof,
        intercepts,
    })
}

/// The inverse of a small square matrix by Gauss–Jordan elimination with partial pivoting;
/// None when it is singular (relative to its largest entry).
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let scale = a
        .iter()
        .flatten()
        .fold(0.0_f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    let mut m: Vec<Vec<f64>> = a
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
            r
        })
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() <= 1e-12 * scale {
            return None;
        }
        m.swap(col, pivot);
        let p = m[col][col];
        for v in m[col].iter_mut() {
            *v /= p;
        }
        for row in 0..n {
            if row != col {
                let f = m[row][col];
                if f != 0.0 {
                    let pivot_row = m[col].clone();
                    for (v, pv) in m[row].iter_mut().zip(pivot_row) {
                        *v -= f * pv;
                    }
                }
            }
        }
    }
    Some(m.into_iter().map(|r| r[n..].to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known slopes and block intercepts come back exactly from noiseless rows, and the
    /// residual is 0.
    #[test]
    fn exact_rows_give_the_slopes_and_intercepts_back() {
        let configs = [[0.0, 0.0], [3.0, 0.0], [0.0, 5.0], [3.0, 5.0]];
        let mut rows = Vec::new();
        for b in 0..4u32 {
            let drift = 100.0 * b as f64;
            for x in configs {
                rows.push(Row {
                    block: b,
                    y: 1000.0 + drift + 40.0 * x[0] + 7.0 * x[1],
                    x: x.to_vec(),
                });
            }
        }
        let f = blocked(&rows).unwrap();
        assert!(
            (f.coef[0] - 40.0).abs() < 1e-9 && (f.coef[1] - 7.0).abs() < 1e-9,
            "{f:?}"
        );
        assert_eq!(f.dof, 16 - 4 - 2);
        assert!(f.sigma() < 1e-9);
        for (b, a) in f.intercepts.iter().enumerate() {
            assert!((a - 1000.0 - 100.0 * b as f64).abs() < 1e-9);
        }
        assert!((f.var_of(&[1.0, 1.0])).abs() < 1e-12);
    }

    #[test]
    fn dependent_or_missing_regressors_have_no_fit() {
        // The second column is twice the first: they cannot be told apart.
        let rows: Vec<Row> = (0..6)
            .map(|i| Row {
                block: 0,
                y: i as f64,
                x: vec![i as f64, 2.0 * i as f64],
            })
            .collect();
        assert!(blocked(&rows).is_none());
        // A column that never varies within a block.
        let rows: Vec<Row> = (0..6)
            .map(|i| Row {
                block: i,
                y: i as f64,
                x: vec![1.0],
            })
            .collect();
        assert!(blocked(&rows).is_none());
        assert!(blocked(&[]).is_none());
    }
}
