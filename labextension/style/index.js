import './base.css';
import './definitions.css';
